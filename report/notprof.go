package report

import (
	"fmt"
	"strings"

	"github.com/spanprof/spanprof/spanprofile"
)

// What the run did not profile (spanprofile.NotProfiled), as every format
// shows it: go test hides the stderr of a passing package, where the
// runtime also says it.

// NotProfiledSummary is one reason of the JSON report's not_profiled: how
// much was not profiled, from which goroutines (where they were created)
// and sites, and why.
type NotProfiledSummary struct {
	Reason     string                `json:"reason"`
	Why        string                `json:"why"`
	Events     int64                 `json:"events,omitempty"`
	Goroutines int64                 `json:"goroutines,omitempty"`
	Creators   []spanprofile.Creator `json:"creators,omitempty"`
	Sites      []NotProfiledSite     `json:"sites,omitempty"`
}

// NotProfiledSite is a site whose begins were among the events.
type NotProfiledSite struct {
	Site   string `json:"site"` // file:line relative to the module root
	Column int    `json:"column,omitempty"`
	Func   string `json:"func"`
	Events int64  `json:"events"`
}

// notProfiled returns the JSON form of p's NotProfiled.
func notProfiled(p *spanprofile.Profile) []NotProfiledSummary {
	var out []NotProfiledSummary
	for _, n := range p.NotProfiled {
		s := NotProfiledSummary{Reason: n.Reason, Why: n.Why(), Events: n.Events, Goroutines: n.Goroutines, Creators: n.Creators}
		for _, se := range n.Sites {
			if se.Site < 0 || se.Site >= len(p.Sites) {
				continue
			}
			site := p.Sites[se.Site]
			s.Sites = append(s.Sites, NotProfiledSite{Site: siteName(site), Column: site.Column, Func: site.Func, Events: se.Events})
		}
		out = append(out, s)
	}
	return out
}

// notProfiledLines returns the text report's sentences on what was not
// profiled, each with its sites, at most five.
func notProfiledLines(p *spanprofile.Profile) []string {
	var out []string
	for _, n := range p.NotProfiled {
		var line string
		switch {
		case n.Reason == spanprofile.NotProfiledUnwound:
			line = count(n.Events, "invocation")
		case n.Events > 0 && n.Goroutines > 0:
			line = count(n.Events, "event") + " from " + count(n.Goroutines, "goroutine")
		case n.Events > 0:
			line = count(n.Events, "event")
		default:
			line = count(n.Goroutines, "goroutine")
		}
		line += ": " + n.Why()
		if len(n.Creators) > 0 {
			var by []string
			for _, c := range n.Creators {
				by = append(by, c.Where)
			}
			if len(by) > 3 {
				by = append(by[:3], fmt.Sprintf("%d more", len(by)-3))
			}
			line += "; created by " + strings.Join(by, ", ")
		}
		var at []string
		for _, s := range n.Sites {
			if s.Site < 0 || s.Site >= len(p.Sites) {
				continue
			}
			if len(at) == 5 {
				at = append(at, "more")
				break
			}
			site := p.Sites[s.Site]
			at = append(at, fmt.Sprintf("%s %s (%s)", sitePlace(site), site.Func, commas(s.Events)))
		}
		if len(at) > 0 {
			line += "; at " + strings.Join(at, ", ")
		}
		out = append(out, line)
	}
	return out
}

// notProfiledAt returns, per site index, the events of goroutines that did
// not hold the profiler that began there.
func notProfiledAt(p *spanprofile.Profile) map[int]int64 {
	at := make(map[int]int64)
	for _, n := range p.NotProfiled {
		for _, s := range n.Sites {
			at[s.Site] += s.Events
		}
	}
	return at
}

// count returns "1 event" or "1,234 events".
func count(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return commas(n) + " " + noun + "s"
}
