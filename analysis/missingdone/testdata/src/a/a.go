package a

import (
	"context"
	"errors"
	"iter"
	"log"
	"os"
	"runtime"
	"sync"

	"golang.org/x/sync/errgroup"
)

func fetch(u string) (int, error) {
	if u == "" {
		return 0, errors.New("empty")
	}
	return len(u), nil
}

// An early return on the error path skips the Done.
func fetchAll(urls []string) []int {
	sizes := make([]int, len(urls))
	var wg sync.WaitGroup
	for i, u := range urls {
		wg.Add(1)
		go func() {
			n, err := fetch(u)
			if err != nil {
				log.Print(err)
				return // want `goroutine spawned at a.go:28 returns here without calling wg.Done\(\): Wait blocks forever; defer wg.Done\(\) at its start`
			}
			sizes[i] = n
			wg.Done()
		}()
	}
	wg.Wait()
	return sizes
}

// A named worker with the WaitGroup by pointer.
func worker(id int, jobs []int, wg *sync.WaitGroup) {
	if id >= len(jobs) {
		return // want `goroutine spawned at a.go:55 returns here without calling wg.Done\(\)`
	}
	jobs[id] *= 2
	wg.Done()
}

func runWorkers(jobs []int) {
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go worker(i, jobs, &wg)
		wg.Add(1)
		go worker(i+4, jobs, &wg) // the same function is reported once
	}
	wg.Wait()
}

// A WaitGroup in a struct field; Done only on one branch.
type server struct {
	wg    sync.WaitGroup
	queue []int
}

func (s *server) drain() {
	if len(s.queue) > 0 {
		s.queue = s.queue[1:]
		s.wg.Done()
	}
} // want `goroutine spawned at a.go:77 reaches the end of its body without calling s.wg.Done\(\)`

func (s *server) start() {
	s.wg.Add(1)
	go s.drain()
	s.wg.Wait()
}

// A defer inside a branch covers only that branch.
func deferInBranch(ok bool) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		if ok {
			defer wg.Done()
			return
		}
	}() // want `goroutine spawned at a.go:85 reaches the end of its body without calling wg.Done\(\)`
	wg.Wait()
}

// Generics: a generic function spawned with a generic struct's WaitGroup.
type Pool[T comparable] struct {
	wg    sync.WaitGroup
	items []T
}

func process[T comparable](x, skip T, wg *sync.WaitGroup) {
	if x == skip {
		return // want `goroutine spawned at a.go:110 returns here without calling wg.Done\(\)`
	}
	wg.Done()
}

func (p *Pool[T]) Each(skip T) {
	for _, it := range p.items {
		p.wg.Add(1)
		go process(it, skip, &p.wg)
	}
	p.wg.Wait()
}

// Range-over-func: the return inside the loop leaves the goroutine.
func firstMatch(seq iter.Seq[int], want int) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		for x := range seq {
			if x == want {
				return // want `goroutine spawned at a.go:119 returns here without calling wg.Done\(\)`
			}
		}
		wg.Done()
	}()
	wg.Wait()
}

// runtime.Goexit ends the goroutine without running a Done that is not deferred.
func goexit(stop bool) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		if stop {
			runtime.Goexit() // want `goroutine spawned at a.go:134 calls runtime.Goexit without calling wg.Done\(\)`
		}
		wg.Done()
	}()
	wg.Wait()
}

// Another defer in the body: reported, but no fix (the Done would run after
// the deferred send, which the parent only receives after Wait).
func otherDefer(results chan<- int, bad bool) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		r := 0
		defer func() { results <- r }()
		if bad {
			return // want `goroutine spawned at a.go:148 returns here without calling wg.Done\(\)`
		}
		r = 1
		wg.Done()
	}()
	wg.Wait()
}

// Negative cases.

func deferred(urls []string) {
	var wg sync.WaitGroup
	for _, u := range urls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := fetch(u); err != nil {
				return
			}
		}()
	}
	wg.Wait()
}

func everyPath(ok bool) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		if ok {
			wg.Done()
			return
		}
		wg.Done()
	}()
	wg.Wait()
}

func deferredLiteral() {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer func() { wg.Done() }()
		if len(os.Args) > 1 {
			return
		}
	}()
	wg.Wait()
}

func negativeAdd(n int) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		if n > 0 {
			wg.Add(-1)
			return
		}
		wg.Add(-1)
	}()
	wg.Wait()
}

func crashes(x int) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		if x < 0 {
			panic("negative")
		}
		if x == 0 {
			log.Fatal("zero")
		}
		if x == 1 {
			os.Exit(1)
		}
		wg.Done()
	}()
	wg.Wait()
}

func forever(jobs chan int) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		for {
			<-jobs
		}
		wg.Done()
	}()
	wg.Wait()
}

func waitGroupGo(urls []string) {
	var wg sync.WaitGroup
	for _, u := range urls {
		wg.Go(func() {
			if _, err := fetch(u); err != nil {
				return
			}
		})
	}
	wg.Wait()
}

func errgroups(ctx context.Context, urls []string) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(2)
	for _, u := range urls {
		g.Go(func() error {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			_, err := fetch(u)
			return err
		})
	}
	return g.Wait()
}

func fireAndForget() {
	go func() {
		if len(os.Args) > 0 {
			return
		}
	}()
}

// A nil WaitGroup has nothing to signal.
func serve(req int, wg *sync.WaitGroup) {
	if wg != nil {
		defer wg.Done()
	}
	if req < 0 {
		return
	}
	_ = req * 2
}

func serveAll(reqs []int) {
	var wg sync.WaitGroup
	for _, r := range reqs {
		wg.Add(1)
		go serve(r, &wg)
	}
	wg.Wait()
}

// The WaitGroup counts requests, not goroutines.
func perRequest(reqs chan int, n, workers int) {
	var wg sync.WaitGroup
	wg.Add(n)
	for range workers {
		go func() {
			for r := range reqs {
				if r < 0 {
					wg.Done()
					continue
				}
				wg.Done()
			}
		}()
	}
	for i := range n {
		reqs <- i
	}
	wg.Wait()
}

// A ready signal given by the first of many goroutines.
func churn(ready *sync.WaitGroup, i int) {
	if i == 0 {
		ready.Done()
	}
	if i < 100 {
		go churn(ready, i+1)
	}
}

func startChurn() {
	var ready sync.WaitGroup
	ready.Add(1)
	churn(&ready, 0)
	ready.Wait()
}
