// Package mistakes has one instance of each mistake spanvet reports.
package mistakes

import (
	"errors"
	"os"
	"sync"
)

func fetch(u string) (int, error) {
	if u == "" {
		return 0, errors.New("empty url")
	}
	return len(u), nil
}

// FetchAll returns early on an error without wg.Done: missingdone.
func FetchAll(urls []string) []int {
	sizes := make([]int, len(urls))
	var wg sync.WaitGroup
	for i, u := range urls {
		wg.Add(1)
		go func() {
			n, err := fetch(u)
			if err != nil {
				return
			}
			sizes[i] = n
			wg.Done()
		}()
	}
	wg.Wait()
	return sizes
}

type Node struct {
	Value    int
	Children []*Node
}

// Walk waits on the WaitGroup it must signal itself: waitcycle.
func (n *Node) Walk(wg *sync.WaitGroup, visit func(*Node)) {
	defer wg.Done()
	visit(n)
	for _, c := range n.Children {
		wg.Add(1)
		go c.Walk(wg, visit)
	}
	wg.Wait()
}

// Affine spawns a goroutine per element for one multiply-add: finegrain.
func Affine(xs, ys []float64) {
	var wg sync.WaitGroup
	for i := range len(xs) {
		wg.Go(func() { ys[i] = 2*xs[i] + 1 })
	}
	wg.Wait()
}

func resize(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return os.WriteFile(path+".half", data[:len(data)/2], 0o644)
}

// ResizeAll waits on a WaitGroup no goroutine was counted in: emptywait.
func ResizeAll(paths []string) {
	var wg sync.WaitGroup
	for _, p := range paths {
		go resize(p)
	}
	wg.Wait()
}
