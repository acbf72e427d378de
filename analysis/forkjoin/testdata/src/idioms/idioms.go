// Package idioms has one instance of each fork/join idiom; result.golden
// lists what the analyzer finds in it.
package idioms

import (
	"context"
	"iter"
	"sync"

	"github.com/spanprof/spanprof/parlib"
	"golang.org/x/sync/errgroup"
)

func work(i int) int { return i * i }

// goClosure: go statement of a literal with a deferred Done.
func goClosure(n int) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work(i)
		}()
	}
	wg.Wait()
}

// goNamed: go statement of a named function; the WaitGroup by pointer.
func goNamed(n int) {
	wg := new(sync.WaitGroup)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go worker(i, wg)
	}
	wg.Wait()
}

func worker(i int, wg *sync.WaitGroup) {
	defer wg.Done()
	work(i)
}

// server: a WaitGroup in a struct field, signalled by a method spawned as a
// method value.
type server struct {
	wg   sync.WaitGroup
	jobs []int
}

func (s *server) start() {
	s.wg.Add(1)
	go s.loop(3)
	s.wg.Wait()
}

func (s *server) loop(n int) {
	for i := range n {
		work(i)
	}
	s.wg.Done()
}

// waitGroupGo: Go 1.25's wg.Go with a literal and with a method value.
func waitGroupGo(s *server) {
	var wg sync.WaitGroup
	wg.Go(func() { work(1) })
	wg.Go(s.run)
	wg.Wait()
}

func (s *server) run() { work(len(s.jobs)) }

// errgroups: WithContext, SetLimit, Go, TryGo.
func errgroups(ctx context.Context) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	g.Go(func() error { return ctx.Err() })
	g.TryGo(func() error { return nil })
	return g.Wait()
}

// parlibs: every parlib form.
func parlibs(xs []int) int {
	var grp parlib.Group
	grp.Spawn(func() { work(1) })
	grp.Sync()

	t := parlib.Spawn(func() int { return work(2) })
	y := parlib.Spawn(func() int { return work(3) }).Wait()

	parlib.Do(func() { work(4) }, func() { work(5) })
	parlib.For(0, len(xs), 0, func(i int) { xs[i] = work(i) })
	parlib.ForRange(0, len(xs), 64, func(lo, hi int) {})
	parlib.ForEach(xs, 0, func(i int, v *int) { *v = work(i) })
	return t.Wait() + y
}

// embedded: a struct that embeds its WaitGroup; a method expression; an
// alias; a negative Add.
type pool struct {
	sync.WaitGroup
}

func embedded(p *pool) {
	p.Add(1)
	go func() {
		defer p.Done()
	}()
	p.Wait()

	var wg sync.WaitGroup
	q := &wg
	wg.Add(2)
	go func() { (*sync.WaitGroup).Done(&wg) }()
	go func() { defer q.Add(-1) }()
	q.Wait()
}

// literalVar: a literal stored in a variable, then spawned.
func literalVar() {
	var wg sync.WaitGroup
	worker := func(id int) {
		defer wg.Done()
		work(id)
	}
	wg.Add(1)
	go worker(7)
	wg.Wait()
}

// Pool is generic; its WaitGroup is a field of a generic struct.
type Pool[T any] struct {
	wg    sync.WaitGroup
	items []T
}

func (p *Pool[T]) Each(f func(T)) {
	for _, it := range p.items {
		p.wg.Add(1)
		go visit(it, &p.wg)
	}
	p.wg.Wait()
}

func visit[T any](x T, wg *sync.WaitGroup) {
	defer wg.Done()
	_ = x
}

// rangeFunc: spawns in the body of a range-over-func loop.
func rangeFunc(seq iter.Seq[int]) {
	var wg sync.WaitGroup
	for x := range seq {
		wg.Go(func() { work(x) })
	}
	wg.Wait()
}

// fireAndForget: no join object.
func fireAndForget() {
	go work(1)
}
