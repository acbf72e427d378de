package shadow

import "github.com/spanprof/spanprof/spanprofile"

// Stop ends the run: invocations still open end now (so a run cut short by
// a panic still yields the profile of what ran), and the profile is built.
func (e *Engine) Stop() *spanprofile.Profile {
	if !e.stopped {
		e.stopped = true
		e.tick()
		for len(e.tasks) > 1 {
			for len(e.frames)-1 > e.tasks[len(e.tasks)-1].base {
				e.CallEnd()
			}
			e.SpawnEnd(nil)
		}
		for len(e.frames) > 1 {
			e.CallEnd()
		}
		tk := &e.tasks[0]
		v := value{t: tk.t, tb: tk.tb, path: e.pp.hold(&tk.path)}
		e.offerSink(&v)
		e.drop(&v)
	}
	return e.profile()
}

func (e *Engine) profile() *spanprofile.Profile {
	p := &spanprofile.Profile{
		Mode:         e.cfg.Mode,
		Measure:      e.cfg.MeasureName,
		Unit:         e.cfg.Unit,
		Work:         e.work,
		Span:         e.sink.t,
		BurdenedSpan: e.sinkTb,
		Burden:       e.cfg.Burden,
		Spawns:       e.spawns,
		Syncs:        e.syncs,
		Overhead:     e.overhead,
		Subtracted:   e.subtracted,
	}
	e.tab.mu.Lock()
	for _, s := range e.tab.sites {
		p.Sites = append(p.Sites, spanprofile.Site{File: s.File, Line: s.Line, Column: s.Column, Func: s.Func, Caller: s.Caller, Kind: s.Kind})
	}
	e.tab.mu.Unlock()

	n := len(e.cct.parent)
	onSpan := make([]spanprofile.Measurement, n)
	e.pp.each(&e.sink.path, func(k int32, m spanprofile.Measurement) { onSpan[k] = m })
	onWork := make([]spanprofile.Measurement, n)
	copy(onWork, e.onWork)
	root := &e.frames[0]
	onWork[0].Local = spanprofile.Triple{Count: 1, Work: root.ownWork, Span: onSpan[0].Local.Span}
	for ctx := 0; ctx < n; ctx++ {
		p.Contexts = append(p.Contexts, spanprofile.Context{
			Stack:  e.cct.stack(int32(ctx)),
			OnWork: onWork[ctx],
			OnSpan: onSpan[ctx],
		})
	}
	return p
}
