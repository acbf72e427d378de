package shadow

import (
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/spanprof/spanprof/spanprofile"
)

// noisy passes events on to an engine after advancing its measure by the
// event's noise: strand j, which event j ends, reads its length plus
// noise[j], as a run on a busy machine would.
type noisy struct {
	e     *engine
	m     *synthetic
	noise []int64
	j     int
}

func (n *noisy) step() {
	if n.j < len(n.noise) {
		n.m.now += uint64(n.noise[n.j])
	}
	n.j++
}
func (n *noisy) CallBegin(s SiteID)        { n.step(); n.e.CallBegin(s) }
func (n *noisy) CallEnd()                  { n.step(); n.e.CallEnd() }
func (n *noisy) SpawnBegin(s SiteID)       { n.step(); n.e.SpawnBegin(s) }
func (n *noisy) SpawnEnd(o unsafe.Pointer) { n.step(); n.e.SpawnEnd(o) }
func (n *noisy) Done(o unsafe.Pointer)     { n.step(); n.e.Done(o) }
func (n *noisy) Wait(o unsafe.Pointer)     { n.step(); n.e.Wait(o) }

// runNoisy runs program seed on a fresh engine with the given noise per
// event, as run k of several when k > 0, and returns the profile and the
// merge's outcome.
func runNoisy(t *testing.T, seed uint64, noise []int64, dir string, k int, fuel int) (*spanprofile.Profile, int64, string) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 17))
	p := genProgram(r)
	tab := &siteTable{}
	tab.add(p.sites)
	m := &synthetic{}
	e := newEngine(config{Measure: m, MeasureName: "synthetic", Unit: "count"}, tab)
	if k > 0 {
		t.Setenv(EnvStrands, dir)
		t.Setenv(EnvRun, strconv.Itoa(k))
		s, err := openStrands()
		if err != nil {
			t.Fatal(err)
		}
		e.setMerge(s)
	}
	o := newOracle(p.sites, 0)
	n := &noisy{e: e, m: m, noise: noise}
	rn := &runner{p: p, ev: []events{n}, m: m, o: o, fuel: fuel}
	rn.run(0, nil, 0)
	n.step() // the strand that stop ends
	prof := e.stop()
	var runs int64
	var note string
	if e.merge != nil {
		runs, note = e.merge.close()
	}
	return prof, runs, note
}

// TestStrandsMergeIsMinimum checks -count's merge against its definition
// on random programs: three runs, each with its own noise on every strand,
// merged, give exactly the profile of one run whose strands have the
// least noise of the three.
func TestStrandsMergeIsMinimum(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 50
	}
	for seed := uint64(0); seed < uint64(n); seed++ {
		r := rand.New(rand.NewPCG(seed, 99))
		dir := t.TempDir()
		const events = 4000
		least := make([]int64, events)
		var got *spanprofile.Profile
		var runs int64
		var note string
		for k := 1; k <= 3; k++ {
			noise := make([]int64, events)
			for j := range noise {
				noise[j] = int64(r.IntN(50))
				if r.IntN(10) == 0 {
					noise[j] += 1000 // a descheduling's tail: rare and long
				}
				if k == 1 || noise[j] < least[j] {
					least[j] = noise[j]
				}
			}
			got, runs, note = runNoisy(t, seed, noise, dir, k, 200)
		}
		want, _, _ := runNoisy(t, seed, least, "", 0, 200)
		if runs != 3 || note != "" {
			t.Fatalf("seed %d: merged %d runs (%q), want 3", seed, runs, note)
		}
		if got.Work != want.Work || got.Span != want.Span || !reflect.DeepEqual(got.Contexts, want.Contexts) {
			t.Fatalf("seed %d: merged work/span %d/%d, the least-noise run %d/%d", seed, got.Work, got.Span, want.Work, want.Span)
		}
	}
}

// TestStrandsPart checks that runs of different programs are not merged:
// the second run says where they parted and keeps its own readings there.
func TestStrandsPart(t *testing.T) {
	noise := make([]int64, 4000)
	for j := range noise {
		noise[j] = 7
	}
	// A program that makes fewer events when it has less fuel.
	seed := uint64(0)
	for ; seed < 100; seed++ {
		a, _, _ := runNoisy(t, seed, noise, "", 0, 200)
		b, _, _ := runNoisy(t, seed, noise, "", 0, 3)
		if a.Spawns+a.Syncs > b.Spawns+b.Syncs+2 {
			break
		}
	}
	dir := t.TempDir()
	runNoisy(t, seed, noise, dir, 1, 200)
	_, runs, note := runNoisy(t, seed, noise, dir, 2, 3)
	if runs != 1 || !strings.Contains(note, "not deterministic") {
		t.Errorf("a shorter second run merged %d runs, note %q; want 1 and a note", runs, note)
	}
	// Run 3 finds no file from run 2, which parted.
	own, _, _ := runNoisy(t, seed, noise, "", 0, 200)
	got, runs, note := runNoisy(t, seed, noise, dir, 3, 200)
	if runs != 1 || !strings.Contains(note, "no strands") {
		t.Errorf("run 3 after a parted run 2 merged %d runs, note %q", runs, note)
	}
	if got.Work != own.Work || got.Span != own.Span {
		t.Errorf("run 3 work/span %d/%d, its own readings give %d/%d", got.Work, got.Span, own.Work, own.Span)
	}
	// A different program.
	dir = t.TempDir()
	runNoisy(t, 3, noise, dir, 1, 200)
	_, runs, note = runNoisy(t, 4, noise, dir, 2, 200)
	if runs != 1 || !strings.Contains(note, "differ") && !strings.Contains(note, "events") {
		t.Errorf("another program's run merged %d runs, note %q", runs, note)
	}
}
