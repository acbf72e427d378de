// Command errgroup spawns with golang.org/x/sync/errgroup: WithContext,
// SetLimit, Go, TryGo and Wait.
package main

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/sync/errgroup"
)

func check(i int) error {
	if i == 3 {
		return errors.New("three")
	}
	return nil
}

func main() {
	g, ctx := errgroup.WithContext(context.Background())
	g.SetLimit(8)
	sums := make([]int, 6)
	for i := range sums {
		g.Go(func() error {
			sums[i] = i + 1
			return check(i)
		})
	}
	if !g.TryGo(func() error { return nil }) {
		fmt.Println("limit reached")
	}
	err := g.Wait()
	fmt.Println(sums, err, ctx.Err() != nil)

	var h errgroup.Group
	h.Go(func() error { return nil })
	fmt.Println(h.Wait())
}
