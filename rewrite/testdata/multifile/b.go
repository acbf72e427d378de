package main

import "sync"

// tree counts the nodes of a complete binary tree of the given depth,
// spawning the left subtree with wg.Go.
func tree(depth int) int {
	if depth == 0 {
		return 1
	}
	var wg sync.WaitGroup
	var left int
	wg.Go(func() { left = tree(depth - 1) })
	right := tree(depth - 1)
	wg.Wait()
	return 1 + left + right
}
