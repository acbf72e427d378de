package shadow

import "testing"

// TestGoroutineMarks checks the lock-free read of the sites' Goroutine
// marks that elision mode makes at every spawn, across tables added after
// the first.
func TestGoroutineMarks(t *testing.T) {
	var tab siteTable
	if tab.goroutine(0) {
		t.Fatal("an empty table marks site 0")
	}
	b1 := tab.add([]SiteInfo{{Caller: "a"}, {Caller: "a", Goroutine: true}})
	b2 := tab.add([]SiteInfo{{Caller: "b", Goroutine: true}, {Caller: "b"}})
	want := map[SiteID]bool{b1: false, b1 + 1: true, b2: true, b2 + 1: false, b2 + 2: false}
	for site, w := range want {
		if got := tab.goroutine(site); got != w {
			t.Errorf("goroutine(%d) = %v, want %v", site, got, w)
		}
	}
}
