// Package sem stands for golang.org/x/sync/semaphore: a method that takes
// a context and waits.
package sem

import "context"

type Weighted struct{ n int64 }

func (w *Weighted) Acquire(ctx context.Context, n int64) error { return nil }

func (w *Weighted) Release(n int64) {}
