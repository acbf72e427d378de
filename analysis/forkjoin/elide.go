package forkjoin

import (
	"fmt"
	"go/token"
	"go/types"
	"slices"
	"strings"
)

// A summary is what a function may wait on, through everything it calls,
// in its own terms (see the package documentation on serial elision).
type summary struct {
	effect *effect    // the first cause found, by position in the function
	waits  []use      // waits on join objects the function did not create
	spawns []spawnUse // children it leaves running on such objects, when not elidable
	locks  []use      // locks of mutexes it did not create
}

// A spawnUse is a spawn onto r whose function is not elidable.
type spawnUse struct {
	use
	reason string
}

// maxRounds bounds the fixed-point iteration; summaries grow monotonically
// and paths are bounded (maxPath), so it is only a guard.
const maxRounds = 100

// elide computes function summaries to a fixed point, then decides each
// spawn's elidability from the summary of the function it spawns.
func (c *collector) elide() {
	c.sums = make(map[*Func]*summary, len(c.res.Funcs))
	for _, f := range c.res.Funcs {
		c.sums[f] = new(summary)
	}
	for range maxRounds {
		changed := false
		for _, f := range c.res.Funcs {
			s := c.summarize(f)
			if !sameSummary(s, c.sums[f]) {
				changed = true
			}
			c.sums[f] = s
		}
		if !changed {
			break
		}
	}
	for _, s := range c.res.Spawns {
		e := c.spawnReason(s)
		s.Elidable = e == nil
		if e != nil {
			s.Reason, s.ReasonPos = e.reason, e.at
			continue
		}
		// Applied last, to a spawn the summaries find elidable, and not fed
		// back into them: a wait on such a child is not itself a reason.
		if o := c.spawnOutside(s); o != nil {
			s.Elidable, s.Outside = false, o
			s.Reason, s.ReasonPos = o.Describe(func(p token.Pos) string { return shortLine(c.fset, p) }), o.Pos
		}
	}
}

func sameSummary(a, b *summary) bool {
	if (a.effect == nil) != (b.effect == nil) {
		return false
	}
	if a.effect != nil && (a.effect.pos != b.effect.pos || a.effect.at != b.effect.at) {
		return false
	}
	return len(a.waits) == len(b.waits) && len(a.spawns) == len(b.spawns) && len(a.locks) == len(b.locks)
}

// summarize computes f's summary from its facts and the current summaries
// of what it calls, defers, and spawns.
func (c *collector) summarize(f *Func) *summary {
	fx := c.facts[f]
	var cands []effect
	cands = append(cands, fx.effects...)
	waits := slices.Clone(fx.waits)
	locks := slices.Clone(fx.locks)
	var spawns []spawnUse
	for _, s := range f.Spawns {
		if s.Join == nil {
			continue
		}
		if e := c.spawnReason(s); e != nil {
			spawns = append(spawns, spawnUse{use{r: s.Join.ref, pos: s.Pos, at: s.Pos}, e.reason})
		}
	}
	merge := func(callee *Func, bind map[types.Object]ref, pos token.Pos, via string) {
		sg := c.sums[callee]
		// An effect found through f itself is one f has by another way.
		if e := sg.effect; e != nil && callee != f && !slices.Contains(e.chain, f) {
			reason := e.reason
			if via != "" {
				reason = "calls " + via + ", which " + reason
			}
			cands = append(cands, effect{pos: pos, at: e.at, reason: reason, chain: append([]*Func{callee}, e.chain...)})
		}
		rebase := func(u use) use {
			if r, ok := c.res.rebase(u.r, bind, callee); ok {
				u.r = r
			}
			u.pos = pos
			return u
		}
		for _, w := range sg.waits {
			waits = append(waits, rebase(w))
		}
		for _, l := range sg.locks {
			locks = append(locks, rebase(l))
		}
		for _, sp := range sg.spawns {
			spawns = append(spawns, spawnUse{rebase(sp.use), sp.reason})
		}
	}
	for _, e := range fx.calls {
		merge(e.callee, e.bind, e.pos, e.name)
	}
	for _, l := range f.inlines {
		merge(l, nil, l.Node.Pos(), "")
	}

	// Waits on objects f creates resolve here: they block only if a child
	// spawned onto them is not elidable.
	s := new(summary)
	for _, w := range waits {
		if !c.local(w.r, f) {
			s.waits = appendUse(s.waits, w, c)
			continue
		}
		key := w.r.key(c.fset)
		for _, sp := range spawns {
			if sp.r.key(c.fset) == key {
				cands = append(cands, effect{pos: w.pos, at: sp.at,
					reason: fmt.Sprintf("waits on %s for a child that is not elidable (it %s)", w.r.name(), sp.reason)})
				break
			}
		}
	}
	for _, sp := range spawns {
		if !c.local(sp.r, f) && !slices.ContainsFunc(s.spawns, func(x spawnUse) bool { return x.r.key(c.fset) == sp.r.key(c.fset) }) {
			s.spawns = append(s.spawns, sp)
		}
	}
	for _, l := range locks {
		if !c.local(l.r, f) {
			s.locks = appendUse(s.locks, l, c)
		}
	}
	for i := range cands {
		if s.effect == nil || cands[i].pos < s.effect.pos {
			s.effect = &cands[i]
		}
	}
	return s
}

func appendUse(us []use, u use, c *collector) []use {
	key := u.r.key(c.fset)
	if slices.ContainsFunc(us, func(x use) bool { return x.r.key(c.fset) == key }) {
		return us
	}
	return append(us, u)
}

// local reports whether r names an object that f creates: a variable
// declared in f's body, or the group of a parlib call in it.
func (c *collector) local(r ref, f *Func) bool {
	switch {
	case r.root != nil:
		return f.Body.Pos() <= r.root.Pos() && r.root.Pos() < f.Body.End()
	case r.call:
		return f.Body.Pos() <= r.anchor && r.anchor < f.Body.End()
	}
	return false
}

// spawnReason returns why s is not elidable, or nil.
func (c *collector) spawnReason(s *Spawn) *effect {
	if s.Callee == nil {
		if s.unknown == "" {
			return nil
		}
		return &effect{pos: s.Pos, at: s.Pos, reason: s.unknown + " at " + shortLine(c.fset, s.Pos)}
	}
	sum := c.sums[s.Callee]
	prefix := ""
	if s.Callee.Obj != nil {
		prefix = shortName(s.Callee) + " "
	}
	var cands []effect
	if sum.effect != nil {
		cands = append(cands, effect{pos: sum.effect.pos, at: sum.effect.at, reason: prefix + sum.effect.reason})
	}
	for _, w := range sum.waits {
		r := w.r
		if m, ok := c.res.rebase(r, s.bind, s.Callee); ok {
			r = m
		}
		what := "a join object it did not create"
		if r.root != nil {
			what = r.name() + ", which it did not create: the continuation may signal it"
		}
		cands = append(cands, effect{pos: w.pos, at: w.at, reason: fmt.Sprintf("%swaits on %s, at %s", prefix, what, shortLine(c.fset, w.at))})
	}
	if len(sum.locks) > 0 {
		held := c.spawnerLocks(s.Func)
		for _, l := range sum.locks {
			r := l.r
			if m, ok := c.res.rebase(r, s.bind, s.Callee); ok {
				r = m
			}
			if at, ok := held[r.key(c.fset)]; ok {
				cands = append(cands, effect{pos: l.pos, at: l.at, reason: fmt.Sprintf(
					"%slocks %s at %s, which the spawning function also locks (at %s): inline, it deadlocks if the lock is held at the spawn",
					prefix, r.name(), shortLine(c.fset, l.at), shortLine(c.fset, at))})
			}
		}
	}
	var first *effect
	for i := range cands {
		if first == nil || cands[i].pos < first.pos {
			first = &cands[i]
		}
	}
	return first
}

// spawnerLocks returns the mutexes f locks in its own code and in the
// literals it defers or calls in place, by key, with a position.
func (c *collector) spawnerLocks(f *Func) map[string]token.Pos {
	held := make(map[string]token.Pos)
	for _, g := range append([]*Func{f}, inlineLits(f)...) {
		for _, l := range c.facts[g].locks {
			if _, ok := held[l.r.key(c.fset)]; !ok {
				held[l.r.key(c.fset)] = l.at
			}
		}
	}
	return held
}

// shortName returns a function's name without its package path.
func shortName(f *Func) string {
	name := f.Name
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	if i := strings.Index(name, "."); i >= 0 {
		name = name[i+1:]
	}
	return name
}
