package shadow

import (
	"bytes"
	"cmp"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/spanprof/spanprof/spanprofile"
)

// What the run saw but could not profile goes into the profile, with how
// many events, from which goroutines and sites, and why (spanprofile's
// NotProfiled), not only on the program's stderr, which go test hides for
// a passing package.
//
// The counting is off the hot path: only events the engine does not take
// are counted, with atomics, so that goroutines the run did not start (a
// b.RunParallel body calling instrumented code on every processor) do not
// contend on a lock.

// Why an event was not profiled.
const (
	whyOther     = iota // from a goroutine that does not hold the engine (gate.go, hold.go)
	whyUnmatched        // an end whose begin was not profiled or was closed already
	whyStopped          // after the run stopped (parallel accounting)
	nWhy
)

var whyReason = [nWhy]string{
	whyOther:     spanprofile.NotProfiledOtherGoroutine,
	whyUnmatched: spanprofile.NotProfiledUnmatchedEnd,
	whyStopped:   spanprofile.NotProfiledAfterStop,
}

// notProfiled counts what the engine did not take.
type notProfiled struct {
	events [nWhy]atomic.Int64
	// counterFailed counts the goroutines that could not open a counter
	// of their own (parallel.go).
	counterFailed atomic.Int64
	// threadLimit counts the goroutines measured by cfg.Shared because
	// maxLocked others held threads of their own (parallel.go).
	threadLimit atomic.Int64
	other       atomic.Pointer[otherEvents] // made at the first such event
}

// otherEvents says where the events of goroutines that do not hold the
// engine come from: per site (a begin names one), and the goroutines, told
// apart by their g, with where each was created.
type otherEvents struct {
	sites [siteChunks]atomic.Pointer[[siteChunk]atomic.Int64]
	// seen is an open-addressed set of the goroutines counted so far; a
	// goroutine that does not fit is counted in full only as events.
	seen       [seenSlots]atomic.Uintptr
	goroutines atomic.Int64
	mu         sync.Mutex
	creators   map[string]int64
}

const (
	siteChunk  = 1024
	siteChunks = 1024 // a million sites
	seenSlots  = 1024
	seenProbe  = 16
)

// note counts an event of goroutine g (0: unknown) at site (-1: none) that
// the engine did not take, for reason why.
func (e *engine) note(why int, g uintptr, site SiteID) {
	e.notProf.events[why].Add(1)
	if why != whyOther {
		return
	}
	o := e.notProf.other.Load()
	if o == nil {
		e.notProf.other.CompareAndSwap(nil, &otherEvents{creators: make(map[string]int64)})
		o = e.notProf.other.Load()
	}
	if site >= 0 && int(site) < siteChunk*siteChunks {
		c := o.sites[site/siteChunk].Load()
		if c == nil {
			o.sites[site/siteChunk].CompareAndSwap(nil, new([siteChunk]atomic.Int64))
			c = o.sites[site/siteChunk].Load()
		}
		c[site%siteChunk].Add(1)
	}
	if g != 0 && o.first(g) {
		o.goroutines.Add(1)
		where := creator()
		o.mu.Lock()
		o.creators[where]++
		o.mu.Unlock()
	}
}

// first reports whether g is seen for the first time (a g reused by a new
// goroutine counts once: the count is a lower bound).
func (o *otherEvents) first(g uintptr) bool {
	h := int(uint64(g>>4) * 0x9E3779B97F4A7C15 >> 54)
	for i := 0; i < seenProbe; i++ {
		s := &o.seen[(h+i)%seenSlots]
		switch v := s.Load(); {
		case v == g:
			return false
		case v == 0 && s.CompareAndSwap(0, g):
			return true
		}
	}
	return false // the set is full: counted as events only
}

// creator returns where the calling goroutine was created, as its stack's
// "created by" line says: the function and its file's base name and line.
func creator() string {
	buf := make([]byte, 8<<10)
	buf = buf[:runtime.Stack(buf, false)]
	i := bytes.LastIndex(buf, []byte("\ncreated by "))
	if i < 0 {
		return "the program's main goroutine"
	}
	rest := buf[i+len("\ncreated by "):]
	fn, rest, _ := bytes.Cut(rest, []byte("\n"))
	fn, _, _ = bytes.Cut(fn, []byte(" in goroutine "))
	loc, _, _ := bytes.Cut(bytes.TrimSpace(rest), []byte(" "))
	if len(loc) == 0 {
		return string(fn)
	}
	return string(fn) + " (" + filepath.Base(string(loc)) + ")"
}

// notProfiledRecords returns what the run did not profile, for the profile.
func (e *engine) notProfiledRecords() []spanprofile.NotProfiled {
	var out []spanprofile.NotProfiled
	for why := range nWhy {
		n := e.notProf.events[why].Load()
		if n == 0 {
			continue
		}
		r := spanprofile.NotProfiled{Reason: whyReason[why], Events: n}
		if o := e.notProf.other.Load(); why == whyOther && o != nil {
			r.Goroutines = o.goroutines.Load()
			o.mu.Lock()
			for where, k := range o.creators {
				r.Creators = append(r.Creators, spanprofile.Creator{Where: where, Goroutines: k})
			}
			o.mu.Unlock()
			slices.SortFunc(r.Creators, func(a, b spanprofile.Creator) int {
				return cmp.Or(cmp.Compare(b.Goroutines, a.Goroutines), cmp.Compare(a.Where, b.Where))
			})
			for i := range o.sites {
				c := o.sites[i].Load()
				if c == nil {
					continue
				}
				for j := range c {
					if k := c[j].Load(); k > 0 {
						r.Sites = append(r.Sites, spanprofile.SiteEvents{Site: i*siteChunk + j, Events: k})
					}
				}
			}
			slices.SortStableFunc(r.Sites, func(a, b spanprofile.SiteEvents) int { return cmp.Compare(b.Events, a.Events) })
		}
		out = append(out, r)
	}
	if e.unwound > 0 {
		out = append(out, spanprofile.NotProfiled{Reason: spanprofile.NotProfiledUnwound, Events: e.unwound})
	}
	if n := e.notProf.counterFailed.Load(); n > 0 {
		out = append(out, spanprofile.NotProfiled{Reason: spanprofile.NotProfiledNoCounter, Goroutines: n})
	}
	if n := e.notProf.threadLimit.Load(); n > 0 {
		reason := spanprofile.NotProfiledThreadLimit
		if e.cfg.Shared == nil {
			reason = spanprofile.NotProfiledNoCounter
		}
		out = append(out, spanprofile.NotProfiled{Reason: reason, Goroutines: n})
	}
	return out
}
