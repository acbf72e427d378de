package shadow

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/spanprof/spanprof/spanprofile"
)

// What-if (causal) profiles: how much work, span and parallelism the run
// would have had if the strands of a target (a region, a site, a
// function) took 1/f of their time, for each factor f and each target
// alone and all targets together. TaskProf (Yoga and Nagarakatte, FSE
// 2017, §4 "causal profile", Figure 1(c)) computes this after the run,
// with a bottom-up pass over its tree of the execution that scales the
// annotated regions' work. spanprof computes it on the fly instead: next to
// every span value the engine carries (a task's t and tb, a value on a join
// edge, a join object's accumulator, the sink) it carries one scaled span
// and burdened span per variant (target × factor), and every strand adds
// its length to the real values and its scaled length to each variant's,
// scaled where the variant's targets are active. Spawns copy the variants,
// joins take their maxima one by one, as for the real value. Max and + are
// all the span is made of, so each variant's value is, exactly, what the
// engine measures on the same run with the targets' strands really that
// much shorter (checked by TestWhatIfOracle), and unlike TaskProf no
// annotation is needed: any site or function the site table names is a
// target.
//
// One thing is not a max: a group with a limit (limit.go) lets a spawn
// go on from the slot that frees first, and which one that is depends on
// the lengths. So a limited group keeps, per variant, its own list of
// slot ends, and each variant takes its own earliest.
//
// A strand is a target's when it runs inside an invocation of one of the
// target's sites: inside the region, inside a call or spawn of the
// function, inside the site's invocation (its callees and the children it
// spawns included, as TaskProf's regions include them). The goroutine's
// list of open sites (gstate.act, activity.go) says so; a goroutine
// spawned for real starts with its parent's.
//
// Everything lives behind engine.wi, nil in a run without targets: the
// engine's hooks are one nil check each.

// defaultFactors are the factors of a what-if profile: 0 stands for ∞,
// strands that take no time.
var defaultFactors = []int64{2, 4, 8, 0}

// whatIf is the state of a run's what-if profile.
type whatIf struct {
	targets []string
	factors []int64
	// sites are, per target, the sites whose invocations are the target's,
	// resolved against the site table whenever it grows.
	sites [][]int32
	// targetsOf is, per site, the targets it is one of: strand walks the
	// goroutine's open sites once and marks their targets.
	targetsOf [][]int32
	nt        int // targets, plus one for all of them together when there are several
	nv        int // variants: nt × factors

	active []bool  // per target, and all together: scratch of strand
	work   []int64 // per variant
	sink   *wvec   // the longest value to any sink, per variant
	lanes  map[unsafe.Pointer][][]wpair
	free   []*wvec
	tabLen int // sites resolved so far
}

// wvec holds a span and a burdened span per variant: v[2i] and v[2i+1].
type wvec struct{ v []int64 }

// wpair is one variant's end of a slot of a limited group.
type wpair struct{ t, tb int64 }

// parseTarget checks a target: a site is a file:line or file:line:column
// (its file relative to the module root, or any tail of that path after
// a slash); anything else names a function (main.prepare) or a region. It
// returns the file, line and column of a site, line 0 for a name.
func parseTarget(s string) (file string, line, col int, err error) {
	if s == "" || strings.TrimSpace(s) != s {
		return "", 0, 0, fmt.Errorf("what-if target %q: want file:line, a function such as main.prepare, or a region name", s)
	}
	rest, last, ok := cutLast(s)
	if !ok {
		return "", 0, 0, nil
	}
	n, err1 := strconv.Atoi(last)
	if err1 != nil {
		return "", 0, 0, nil // a name with a colon
	}
	if f, l, ok := cutLast(rest); ok {
		if m, err2 := strconv.Atoi(l); err2 == nil && f != "" {
			return f, m, n, checkLine(s, m)
		}
	}
	if rest == "" {
		return "", 0, 0, fmt.Errorf("what-if target %q has a line but no file", s)
	}
	return rest, n, 0, checkLine(s, n)
}

func cutLast(s string) (string, string, bool) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return "", "", false
	}
	return s[:i], s[i+1:], true
}

func checkLine(s string, n int) error {
	if n <= 0 {
		return fmt.Errorf("what-if target %q: lines start at 1", s)
	}
	return nil
}

// ParseTargets splits a comma-separated list of what-if targets and checks
// each.
func ParseTargets(list string) ([]string, error) {
	var out []string
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if _, _, _, err := parseTarget(s); err != nil {
			return nil, err
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-whatif %q names no target", list)
	}
	return out, nil
}

// matches reports whether site s is one of target's.
func matches(target string, s *SiteInfo) bool {
	file, line, col, _ := parseTarget(target)
	if line == 0 {
		return s.Func == target
	}
	if s.Line != line || col != 0 && s.Column != col {
		return false
	}
	return s.File == file || strings.HasSuffix(s.File, "/"+file)
}

func newWhatIf(targets []string, factors []int64) *whatIf {
	w := &whatIf{targets: targets, factors: factors, sites: make([][]int32, len(targets))}
	w.nt = len(targets)
	if w.nt > 1 {
		w.nt++
	}
	w.nv = w.nt * len(factors)
	w.active = make([]bool, w.nt)
	w.work = make([]int64, w.nv)
	w.sink = w.get()
	return w
}

// resolve adds the sites registered since the last call to the targets
// they belong to.
func (w *whatIf) resolve(tab *siteTable) {
	tab.mu.Lock()
	defer tab.mu.Unlock()
	for ; w.tabLen < len(tab.sites); w.tabLen++ {
		var of []int32
		for i, t := range w.targets {
			if matches(t, &tab.sites[w.tabLen]) {
				w.sites[i] = append(w.sites[i], int32(w.tabLen))
				of = append(of, int32(i))
			}
		}
		w.targetsOf = append(w.targetsOf, of)
	}
}

// get returns a vector of zeros.
func (w *whatIf) get() *wvec {
	if n := len(w.free); n > 0 {
		v := w.free[n-1]
		w.free = w.free[:n-1]
		clear(v.v)
		return v
	}
	return &wvec{v: make([]int64, 2*w.nv)}
}

func (w *whatIf) put(v *wvec) {
	if v != nil {
		w.free = append(w.free, v)
	}
}

func (w *whatIf) clone(v *wvec) *wvec {
	c := w.get()
	if v != nil {
		copy(c.v, v.v)
	}
	return c
}

// maxInto makes dst the maximum of dst and src, variant by variant, and
// frees src.
func (w *whatIf) maxInto(dst, src *wvec) {
	if src == nil {
		return
	}
	for i, x := range src.v {
		if x > dst.v[i] {
			dst.v[i] = x
		}
	}
	w.put(src)
}

// strand adds a strand of length d, run by goroutine st, to task tk's
// variants: d where the variant's targets are not active, d/f where they
// are (none for ∞).
func (w *whatIf) strand(ap *actPool, st *gstate, tk *task, d int64) {
	nt := len(w.targets)
	clear(w.active)
	anyOn := false
	for r := st.act; r != 0; r = ap.slab[r].next {
		if s := ap.slab[r].site; int(s) < len(w.targetsOf) {
			for _, i := range w.targetsOf[s] {
				w.active[i] = true
				anyOn = true
			}
		}
	}
	if w.nt > nt {
		w.active[nt] = anyOn
	}
	v := tk.w.v
	k := 0
	for i := 0; i < w.nt; i++ {
		for _, f := range w.factors {
			dd := d
			if w.active[i] {
				dd = 0
				if f > 0 {
					dd = d / f
				}
			}
			w.work[k] += dd
			v[2*k] += dd
			v[2*k+1] += dd
			k++
		}
	}
}

// spawn starts child's variants from parent's, then charges the burden to
// the parent's continuation, as spawnBegin does for the real values.
func (w *whatIf) spawn(parent, child *task, burden int64) {
	child.w = w.clone(parent.w)
	for i := 1; i < len(parent.w.v); i += 2 {
		parent.w.v[i] += burden
	}
}

// offerSink keeps the longest of each variant's values to a sink.
func (w *whatIf) offerSink(v *wvec) {
	if v == nil {
		return
	}
	for i, x := range v.v {
		if x > w.sink.v[i] {
			w.sink.v[i] = x
		}
	}
}

// lane keeps, per variant, the end of a child of limited group obj, and
// frees v: each variant chooses its own slot (slot).
func (w *whatIf) lane(obj unsafe.Pointer, v *wvec) {
	if w.lanes == nil {
		w.lanes = make(map[unsafe.Pointer][][]wpair)
	}
	ls := w.lanes[obj]
	if ls == nil {
		ls = make([][]wpair, w.nv)
	}
	for k := range ls {
		var p wpair
		if v != nil {
			p = wpair{v.v[2*k], v.v[2*k+1]}
		}
		ls[k] = append(ls[k], p)
	}
	w.lanes[obj] = ls
	w.put(v)
}

// slot frees, per variant, the slot of group obj whose child ends first,
// and task tk goes on from it (limit.go's slotAt, variant by variant: the
// first of equal ends, as there).
func (w *whatIf) slot(obj unsafe.Pointer, tk *task) {
	ls := w.lanes[obj]
	for k, l := range ls {
		if len(l) == 0 {
			continue
		}
		first := 0
		for i, p := range l {
			if p.t < l[first].t {
				first = i
			}
		}
		p := l[first]
		ls[k] = append(l[:first], l[first+1:]...)
		tk.w.v[2*k] = max(tk.w.v[2*k], p.t)
		tk.w.v[2*k+1] = max(tk.w.v[2*k+1], p.tb)
	}
}

// takeLanes moves the slots of group obj into its accumulator at a wait.
// The accumulator's variants are *aw (its joinExt's).
func (w *whatIf) takeLanes(obj unsafe.Pointer, aw **wvec) {
	ls, ok := w.lanes[obj]
	if !ok {
		return
	}
	delete(w.lanes, obj)
	if *aw == nil {
		*aw = w.get()
	}
	for k, l := range ls {
		for _, p := range l {
			(*aw).v[2*k] = max((*aw).v[2*k], p.t)
			(*aw).v[2*k+1] = max((*aw).v[2*k+1], p.tb)
		}
	}
}

// results returns the what-if profile: one entry per target and factor,
// then the targets together, per factor.
func (w *whatIf) results(tab *siteTable) []spanprofile.WhatIf {
	w.resolve(tab)
	var out []spanprofile.WhatIf
	tab.mu.Lock()
	defer tab.mu.Unlock()
	k := 0
	for i := 0; i < w.nt; i++ {
		var r spanprofile.WhatIf
		if i < len(w.targets) {
			r.Target = w.targets[i]
			r.Sites = len(w.sites[i])
			if r.Sites > 0 {
				s := &tab.sites[w.sites[i][0]]
				if s.Kind != spanprofile.KindRegion {
					r.Site = s.File + ":" + strconv.Itoa(s.Line)
					r.Func = s.Func
				}
			}
		} else {
			r.Target = spanprofile.WhatIfAll
			var all []int32
			for _, ss := range w.sites {
				all = append(all, ss...)
			}
			slices.Sort(all)
			r.Sites = len(slices.Compact(all))
		}
		for _, f := range w.factors {
			r.Factor = f
			r.Work, r.Span, r.BurdenedSpan = w.work[k], w.sink.v[2*k], w.sink.v[2*k+1]
			out = append(out, r)
			k++
		}
	}
	return out
}
