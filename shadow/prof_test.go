package shadow

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/spanprof/spanprof/perf"

	"github.com/spanprof/spanprof/spanprofile"
)

type model map[int32]spanprofile.Measurement

func (m model) add(k int32, v spanprofile.Measurement) {
	x := m[k]
	addMeasurement(&x, &v)
	m[k] = x
}

func contents(pp *profPool, p *prof) model {
	out := model{}
	// Read without flushing so the structure under test is not changed by
	// looking at it: the array, then the list.
	if a := pp.ar(p.arr); a != nil {
		for _, k := range a.used {
			out.add(k, a.recs[k])
		}
	}
	for r, i := p.head, int32(0); r != 0 && i < p.n; r, i = pp.nd(r).next, i+1 {
		out.add(pp.nd(r).key, pp.nd(r).rec)
	}
	for k, v := range out {
		if v == (spanprofile.Measurement{}) {
			delete(out, k)
		}
	}
	return out
}

// TestProfAgainstModel runs random sequences of INIT, UPDATE, ASSIGN, UNION,
// share and flush over a handful of profs, some sharing structure, and
// checks every prof against a map after every operation; at the end nothing
// may be left allocated. The updates include addSpan and addLocal, the hot
// path's forms, which change an array or a pending update in place only
// while no other prof shares it.
func TestProfAgainstModel(t *testing.T) {
	for seed := uint64(0); seed < 300; seed++ {
		r := rand.New(rand.NewPCG(seed, 3))
		var pp profPool
		const n = 5
		var profs [n]prof
		models := [n]model{}
		for i := range models {
			models[i] = model{}
		}
		keys := int32(1 + r.IntN(40))
		for step := 0; step < 400; step++ {
			a, b := r.IntN(n), r.IntN(n)
			var what string
			switch r.IntN(12) {
			case 0:
				what = "init"
				pp.init(&profs[a])
				models[a] = model{}
			case 1:
				if a == b {
					continue
				}
				what = "assign"
				pp.assign(&profs[a], &profs[b])
				models[a], models[b] = models[b], model{}
			case 2:
				if a == b {
					continue
				}
				what = "union"
				pp.union(&profs[a], &profs[b])
				for k, v := range models[b] {
					models[a].add(k, v)
				}
				models[b] = model{}
			case 3:
				if a == b {
					continue
				}
				what = "share"
				pp.init(&profs[a])
				profs[a] = pp.share(&profs[b])
				models[a] = maps.Clone(models[b])
			case 4:
				what = "flush"
				pp.flush(&profs[a])
			case 5:
				what = "addSpan"
				k, d := r.Int32N(keys), int64(1+r.IntN(9))
				pp.addSpan(&profs[a], k, d)
				models[a].add(k, spanprofile.Measurement{Local: spanprofile.Triple{Span: d}})
			case 6:
				what = "addLocal"
				k, w := r.Int32N(keys), int64(1+r.IntN(9))
				pp.addLocal(&profs[a], k, w)
				models[a].add(k, spanprofile.Measurement{Local: spanprofile.Triple{Count: 1, Work: w}})
			default:
				what = "update"
				k := r.Int32N(keys)
				v := spanprofile.Measurement{Local: spanprofile.Triple{Count: 1, Span: int64(1 + r.IntN(9))}, TopCaller: spanprofile.Triple{Work: int64(r.IntN(3))}}
				pp.update(&profs[a], k, v)
				models[a].add(k, v)
			}
			for i := range profs {
				if got := contents(&pp, &profs[i]); !maps.Equal(got, models[i]) {
					t.Fatalf("seed %d step %d (%s): prof %d = %v, model %v", seed, step, what, i, got, models[i])
				}
			}
		}
		for i := range profs {
			pp.init(&profs[i])
		}
		if pp.liveNodes() != 0 || pp.liveArrays != 0 {
			t.Fatalf("seed %d: %d nodes and %d arrays still live after every prof was released", seed, pp.liveNodes(), pp.liveArrays)
		}
	}
}

// TestProfEachFlushes checks PRINT-like iteration in key order.
func TestProfEachFlushes(t *testing.T) {
	var pp profPool
	var p prof
	for k := int32(9); k >= 0; k-- {
		pp.update(&p, k, spanprofile.Measurement{Local: spanprofile.Triple{Span: int64(k)}})
	}
	q := pp.share(&p)
	var keys []int32
	pp.each(&q, func(k int32, m spanprofile.Measurement) {
		if m.Local.Span != int64(k) {
			t.Errorf("key %d: span %d", k, m.Local.Span)
		}
		keys = append(keys, k)
	})
	if fmt.Sprint(keys) != "[0 1 2 3 4 5 6 7 8 9]" {
		t.Errorf("keys = %v, want 0..9 in order", keys)
	}
	pp.init(&p)
	pp.init(&q)
	if pp.liveNodes() != 0 || pp.liveArrays != 0 {
		t.Errorf("leak: %d nodes, %d arrays", pp.liveNodes(), pp.liveArrays)
	}
}

// BenchmarkProfOps measures the amortized cost of one operation in the mix
// the engine produces (updates on a path, a share per spawn, a release or
// assign per join) as the key space S grows from 10 to 10^5: Figure 4's
// bound says the cost per operation stays flat. Keys are uniform over S, so
// at S = 10^5 the arrays (7 MB) no longer fit in cache and time per
// operation grows with cache misses; instructions per operation (reported
// where the hardware counter opens) show the algorithm's own cost.
func BenchmarkProfOps(b *testing.B) {
	for _, s := range []int32{10, 100, 1000, 10000, 100000} {
		b.Run(fmt.Sprintf("S=%d", s), func(b *testing.B) {
			var pp profPool
			pp.keys = s
			r := rand.New(rand.NewPCG(1, 2))
			keys := make([]int32, 4096)
			for i := range keys {
				keys[i] = r.Int32N(s)
			}
			var path, child prof
			m := spanprofile.Measurement{Local: spanprofile.Triple{Span: 1}}
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			if ins, err := perf.Open(perf.Instructions); err == nil {
				i0 := ins.Read()
				defer func() {
					b.ReportMetric(float64(ins.Read()-i0)/float64(b.N), "insns/op")
					ins.Close()
				}()
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				k := keys[i&4095]
				switch i & 7 {
				case 0: // spawn: the child shares the parent's path
					pp.init(&child)
					child = pp.share(&path)
				case 4: // join: the longer path wins
					if i&8 == 0 {
						pp.assign(&path, &child)
					} else {
						pp.init(&child)
					}
				case 1, 2, 3:
					pp.update(&child, k, m)
				default:
					pp.update(&path, k, m)
				}
			}
		})
	}
}

// TestAssignAdoptsTheList checks the flush rule for a path a wait adopts:
// the list a child built on its parent's shared list becomes the
// adopter's own, so the adopter's next share flushes it once, rather than
// each handle shared from it later (every child of a parent that spawns in
// a loop, as stencil's does) finding the list past the limit and copying
// the shared array itself. The contents are checked against a model.
func TestAssignAdoptsTheList(t *testing.T) {
	var pp profPool
	var parent prof
	want := model{}
	l := pp.flushLimit()
	for k := int32(0); k < l/2-1; k++ { // a list the parent pushed, below its flush rule
		pp.addSpan(&parent, k%7, 1)
		want.add(k%7, spanprofile.Measurement{Local: spanprofile.Triple{Span: 1}})
	}
	var child prof
	pp.shareInto(&child, &parent)
	pp.addSpan(&child, 9, 5)
	want.add(9, spanprofile.Measurement{Local: spanprofile.Triple{Span: 5}})
	n := child.n
	pp.assign(&parent, &child) // the wait: the child's path is the longer
	if parent.own != n || parent.n != n {
		t.Fatalf("after the wait the parent's list has %d nodes, %d its own; want %d and %d", parent.n, parent.own, n, n)
	}
	var next prof
	pp.shareInto(&next, &parent) // the next spawn
	if parent.head != 0 || pp.flushes != 1 {
		t.Errorf("the next share left the parent %d pending updates after %d flushes; want them flushed once", parent.n, pp.flushes)
	}
	for _, p := range []*prof{&parent, &next} {
		if got := contents(&pp, p); !maps.Equal(got, want) {
			t.Errorf("contents %v, want %v", got, want)
		}
	}
	pp.init(&parent)
	pp.init(&next)
	if pp.liveNodes() != 0 || pp.liveArrays != 0 {
		t.Errorf("left allocated: %d nodes, %d arrays", pp.liveNodes(), pp.liveArrays)
	}
}
