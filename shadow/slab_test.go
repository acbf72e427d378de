package shadow

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// The structures that every event writes hold no Go pointer, so that their
// stores pay no write barrier and the collector does not scan them
// (record.go). A field with a pointer added to one of them would bring the
// barriers back without failing any other test.
func TestHotStructsHoldNoPointers(t *testing.T) {
	var hasPtr func(reflect.Type) bool
	hasPtr = func(ty reflect.Type) bool {
		switch ty.Kind() {
		case reflect.Pointer, reflect.UnsafePointer, reflect.Slice, reflect.Map, reflect.Chan,
			reflect.Func, reflect.Interface, reflect.String:
			return true
		case reflect.Array:
			return hasPtr(ty.Elem())
		case reflect.Struct:
			for i := range ty.NumField() {
				if hasPtr(ty.Field(i).Type) {
					return true
				}
			}
		}
		return false
	}
	for _, v := range []any{record{}, profNode{}, prof{}, frame{}, joinAcc{}} {
		if ty := reflect.TypeOf(v); hasPtr(ty) {
			t.Errorf("%v holds a pointer", ty)
		}
	}
	// The check itself must see a pointer where there is one.
	if !hasPtr(reflect.TypeOf(joinExt{})) || !hasPtr(reflect.TypeOf(struct{ a [2]struct{ p *int } }{})) {
		t.Fatal("hasPtr misses pointers")
	}
}

// The record slab against a model: random chains built, retained and
// released across the slab's growth, every live record's fields and every
// find checked against a walk of the model, and nothing left live at the
// end.
func TestRecordSlabOracle(t *testing.T) {
	type mrec struct {
		up     recRef
		id     uint64
		o, pos int64
		conn   bool
		refs   int32
	}
	for seed := range uint64(50) {
		r := rand.New(rand.NewPCG(seed, 7))
		var rp recordPool
		model := map[recRef]*mrec{}
		var held []recRef // one reference each, owned by the test
		pos := int64(0)
		release := func(x recRef) {
			rp.release(x)
			for x != 0 {
				m := model[x]
				m.refs--
				if m.refs > 0 {
					return
				}
				delete(model, x)
				x = m.up
			}
		}
		for range 2000 {
			switch k := r.IntN(10); {
			case k < 5 || len(held) == 0:
				var up recRef
				if len(held) > 0 && r.IntN(4) > 0 {
					up = held[r.IntN(len(held))]
				}
				pos++
				id := uint64(r.IntN(8))
				x := rp.get(id, int64(r.IntN(100)), pos, r.IntN(2) == 0, up)
				if model[x] != nil {
					t.Fatalf("seed %d: get returned live record %d", seed, x)
				}
				if up != 0 {
					model[up].refs++
				}
				model[x] = &mrec{up: up, id: id, o: rp.recs[x].o, pos: pos, conn: rp.recs[x].conn, refs: 1}
				held = append(held, x)
			case k < 7:
				x := held[r.IntN(len(held))]
				rp.retain(x)
				model[x].refs++
				held = append(held, x)
			default:
				i := r.IntN(len(held))
				x := held[i]
				held = append(held[:i], held[i+1:]...)
				release(x)
			}
			if rp.live != len(model) {
				t.Fatalf("seed %d: %d live records, model has %d", seed, rp.live, len(model))
			}
			for x, m := range model {
				g := rp.recs[x]
				if g.up != m.up || g.id != m.id || g.o != m.o || g.pos != m.pos || g.conn != m.conn || g.refs != m.refs {
					t.Fatalf("seed %d: record %d is %+v, model %+v", seed, x, g, *m)
				}
			}
			if len(held) > 0 {
				x := held[r.IntN(len(held))]
				id, start := uint64(r.IntN(8)), int64(r.IntN(int(pos)+1))
				want := recRef(0)
				for y := x; y != 0 && model[y].pos >= start; y = model[y].up {
					if model[y].id == id {
						want = y
						break
					}
				}
				if got := rp.find(x, id, start); got != want {
					t.Fatalf("seed %d: find(%d, %d, %d) = %d, want %d", seed, x, id, start, got, want)
				}
			}
		}
		for _, x := range held {
			release(x)
		}
		if rp.live != 0 || len(rp.free) != rp.all || rp.all != len(rp.recs)-1 {
			t.Fatalf("seed %d: after releasing all, %d live, %d free of %d", seed, rp.live, len(rp.free), rp.all)
		}
	}
}
