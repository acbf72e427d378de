package shadow

import (
	"testing"

	"github.com/spanprof/spanprof/spanprofile"
)

// TestWorthCollecting: the collector runs before the profile is made and
// written only where the profile allocates more than a collection scans,
// as in the runs measured for it (docs/benchmarks.md).
func TestWorthCollecting(t *testing.T) {
	for _, c := range []struct {
		name     string
		contexts int
		scan     uint64
		want     bool
	}{
		{"matmul: 17,611 contexts, 3.5 MB to scan", 17_611, 3_536_368, true},
		{"cholesky: 2,939 contexts, 1.85 MB to scan", 2_939, 1_850_768, true},
		{"cilksort: 2,994 contexts, 12 MB to scan", 2_994, 12_026_576, false},
		{"treesum: 13 contexts, 207 MB to scan", 13, 207_546_128, false},
		{"the runtime says nothing", 100_000, 0, false},
	} {
		if got := worthCollecting(c.contexts, c.scan); got != c.want {
			t.Errorf("%s: worthCollecting = %v, want %v", c.name, got, c.want)
		}
	}
	// A running program has stacks and globals to scan at the least: a
	// scanBytes that reads 0 turns the collection off everywhere.
	if scanBytes() == 0 {
		t.Error("scanBytes() = 0: the runtime's metrics were not read")
	}
}

// TestCollectionInNoStrand: what runs between the run's end and the
// profile's making (a collection) is in no strand: a second of it changes
// neither the work nor the span, and it sees the run's contexts.
func TestCollectionInNoStrand(t *testing.T) {
	for _, mode := range []runMode{serialMode, parallelMode} {
		t.Run(mode.String(), func(t *testing.T) {
			run := func(between func(m *synthetic) func(int)) *spanprofile.Profile {
				tab := &siteTable{}
				tab.add([]SiteInfo{{File: "f.go", Line: 1, Func: "main.f", Caller: "main.main", Kind: spanprofile.KindCall}})
				m := &synthetic{now: 1000}
				e := newEngine(config{Measure: m, MeasureName: "synthetic", Mode: mode}, tab)
				m.now += 10
				e.CallBegin(0)
				m.now += 100
				e.CallEnd()
				m.now += 10
				if between == nil {
					return e.stop()
				}
				return e.stopAnd(between(m))
			}
			want := run(nil)
			var saw int
			got := run(func(m *synthetic) func(int) {
				return func(contexts int) {
					saw = contexts
					m.now += 1e9
				}
			})
			if got.Work != want.Work || got.Span != want.Span {
				t.Errorf("work %d, span %d with a second between the end and the profile: want %d and %d", got.Work, got.Span, want.Work, want.Span)
			}
			if saw != len(want.Contexts) {
				t.Errorf("between saw %d contexts, want the profile's %d", saw, len(want.Contexts))
			}
		})
	}
}
