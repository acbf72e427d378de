package a

import (
	"context"
	"sync"

	"github.com/spanprof/spanprof/parlib"
	"golang.org/x/sync/errgroup"
)

func resize(p string) { _ = p }

// Goroutines started with a plain go statement, never counted.
func resizeAll(paths []string) {
	var wg sync.WaitGroup
	for _, p := range paths {
		go resize(p)
	}
	wg.Wait() // want `wg.Wait waits for nothing: nothing spawns onto or signals wg, so it returns at once \(start the goroutines with wg.Go, or count them with wg.Add and Done\)`
}

// A shadowed WaitGroup: the inner one is waited on, the outer one counted.
func shadowed(paths []string, again bool) {
	wg := new(sync.WaitGroup)
	for _, p := range paths {
		wg.Go(func() { resize(p) })
	}
	if again {
		wg := &sync.WaitGroup{}
		wg.Wait() // want `wg.Wait waits for nothing`
	}
	wg.Wait()
}

// An errgroup from WithContext with SetLimit never used... SetLimit is a use.
func limited(ctx context.Context, urls []string) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for _, u := range urls {
		go func() { _ = ctx; _ = u }()
	}
	return g.Wait()
}

// An errgroup whose goroutines were started with go statements.
func crawl(ctx context.Context, urls []string) error {
	g, ctx := errgroup.WithContext(ctx)
	for _, u := range urls {
		go func() { _, _ = ctx, u }()
	}
	return g.Wait() // want `g.Wait waits for nothing: nothing spawns onto or signals g, so it returns at once \(start the goroutines with g.Go\)`
}

// A parlib group that nothing spawns into.
func sum(xs []int) int {
	var grp parlib.Group
	total := 0
	for _, x := range xs {
		total += x
	}
	grp.Sync() // want `grp.Sync waits for nothing: nothing spawns onto or signals grp, so it returns at once \(start the functions with grp.Spawn\)`
	return total
}

// An unexported package-level WaitGroup only ever waited on.
var background sync.WaitGroup

func shutdown() {
	(&background).Wait() // want `\(&background\).Wait waits for nothing`
}

// Generics: a generic function with an unused local group.
func mapAll[T, U any](xs []T, f func(T) U) []U {
	out := make([]U, len(xs))
	var wg sync.WaitGroup
	for i, x := range xs {
		go func() { out[i] = f(x) }()
	}
	wg.Wait() // want `wg.Wait waits for nothing`
	return out
}

// Negative cases.

// Counted by pointer through a helper.
func helper(wg *sync.WaitGroup) { wg.Add(1); go func() { defer wg.Done() }() }

func byPointer() {
	var wg sync.WaitGroup
	helper(&wg)
	wg.Wait()
}

// A parameter: the caller may have counted work in it.
func param(wg *sync.WaitGroup) { wg.Wait() }

// A field: other methods may signal it.
type server struct{ wg sync.WaitGroup }

func (s *server) stop() { s.wg.Wait() }

// A WaitGroup from somewhere else.
func fromElsewhere(get func() *sync.WaitGroup) {
	wg := get()
	wg.Wait()
}

// Range variables over a slice of groups.
func all(groups []*sync.WaitGroup) {
	for _, wg := range groups {
		wg.Wait()
	}
}

// An alias used for the Add.
func alias() {
	var wg sync.WaitGroup
	p := &wg
	p.Add(1)
	go func() { defer p.Done() }()
	wg.Wait()
}

// wg.Go, errgroup Go, parlib Spawn.
func used(ctx context.Context) error {
	var wg sync.WaitGroup
	wg.Go(func() {})
	wg.Wait()
	var grp parlib.Group
	grp.Spawn(func() {})
	grp.Sync()
	g, _ := errgroup.WithContext(ctx)
	g.Go(func() error { return nil })
	return g.Wait()
}

// Exported package-level: other packages may use it.
var Background sync.WaitGroup

func Shutdown() { Background.Wait() }
