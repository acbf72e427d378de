package limits

import "golang.org/x/sync/errgroup"

func limited(n int) {
	var g errgroup.Group
	g.SetLimit(2)
	for range 8 {
		g.Go(func() error { return nil })
	}
	g.Wait()

	var h errgroup.Group
	h.SetLimit(n)
	h.Wait()
}
