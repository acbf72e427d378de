package a

import "github.com/spanprof/spanprof/region"

func work() {}

func deferred() {
	defer region.Begin("ok").End()
	work()
}

func statements() {
	r := region.Begin("ok")
	work()
	r.End()
	var s = region.Begin("ok")
	s.End()
	region.Begin("ok").End()
	(region.Begin("ok")).End()
}

func do() {
	region.Do("ok", work)
}

func discarded() {
	region.Begin("lost") // want `region.Begin without End in the same function`
	work()
}

func neverEnded() {
	r := region.Begin("open") // want `region.Begin without End in the same function`
	_ = r
	work()
}

func endedInAClosure() {
	r := region.Begin("closure") // want `region.Begin without End in the same function`
	defer func() { r.End() }()
	work()
}

func escapes() region.Region {
	return region.Begin("returned") // want `region.Begin without End in the same function`
}

func passed(end func(region.Region)) {
	end(region.Begin("passed")) // want `region.Begin without End in the same function`
}

func inALiteral() {
	f := func() {
		defer region.Begin("ok").End()
		work()
	}
	f()
	g := func() {
		region.Begin("lost in a literal") // want `region.Begin without End in the same function`
	}
	g()
}

func blank() {
	_ = region.Begin("blank") // want `region.Begin without End in the same function`
}
