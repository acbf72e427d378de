package shadow

import (
	"sync"
	"sync/atomic"

	"github.com/spanprof/spanprof/spanprofile"
)

// SiteID names a site: an index into a site table. The rewriter assigns each
// instrumented package a static table and refers to its sites as base+i, so
// the hot path carries a small integer, never a string.
type SiteID int32

// SiteInfo describes a site in a package's static table.
type SiteInfo struct {
	File   string // relative to the module root
	Line   int
	Column int    // tells apart sites on one line; 0 when unknown
	Func   string // the spawned or called function, as the compiler names it
	Caller string // the function containing the site
	Kind   spanprofile.Kind
	// Goroutine marks a spawn the analyzer found not elidable (it waits
	// for its continuation, or talks to it): it runs as a real goroutine in
	// every mode, under parallel accounting.
	Goroutine bool
	// Loop, LimitKind and LimitAt are what the analyzer saw around a
	// spawn, carried into the profile's site as they are
	// (spanprofile.Site).
	Loop      string
	LimitKind string
	LimitAt   string
	// Why is set on a row of LeftOut, a call not instrumented: why not.
	Why string
}

// siteTable is a table of sites with the function containing each, numbered
// for the top-caller measurement.
type siteTable struct {
	mu    sync.Mutex
	sites []SiteInfo
	fn    []int32 // per site: the id of its Caller
	fnID  map[string]int32
	// leftOut are the calls left out that may carry work (LeftOut).
	leftOut []SiteInfo
	// goSites holds, per site, its Goroutine mark, replaced whole when
	// sites are added, so that elision mode's spawns read it without the
	// lock: a mutex per spawn was a tenth of elided fib's time, the very
	// baseline that profiled runs are compared with.
	goSites atomic.Pointer[[]bool]
}

func (t *siteTable) add(sites []SiteInfo) SiteID {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.fnID == nil {
		t.fnID = make(map[string]int32)
	}
	base := SiteID(len(t.sites))
	for _, s := range sites {
		id, ok := t.fnID[s.Caller]
		if !ok {
			id = int32(len(t.fnID))
			t.fnID[s.Caller] = id
		}
		t.sites = append(t.sites, s)
		t.fn = append(t.fn, id)
	}
	marks := make([]bool, len(t.sites))
	for i := range t.sites {
		marks[i] = t.sites[i].Goroutine
	}
	t.goSites.Store(&marks)
	return base
}

// LeftOut registers calls that the rewriter did not instrument although
// they may carry work, so that the profile names them
// (spanprofile.LeftOutCall); they get no site number. Generated code calls
// it from a package-level variable initializer, as Init.
func LeftOut(calls []SiteInfo) int {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	registry.leftOut = append(registry.leftOut, calls...)
	return len(registry.leftOut)
}

// registry is the process-wide table that generated code registers into.
var registry siteTable

// register appends a package's sites to the process-wide table and returns
// the ID of the first. Generated code calls it from a package-level variable
// initializer, so every table is complete before main runs.
func register(sites []SiteInfo) SiteID {
	return registry.add(sites)
}

// goroutine reports whether site is a Goroutine site, which elision mode
// runs as written: inline, it would wait for its continuation forever.
func (t *siteTable) goroutine(site SiteID) bool {
	marks := t.goSites.Load()
	return marks != nil && int(site) < len(*marks) && (*marks)[site]
}
