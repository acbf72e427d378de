package shadow

import (
	"sync"
	"testing"
	"time"
)

// waitParked waits until n goroutines are parked on l.
func waitParked(t *testing.T, l *engineLock, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		l.mu.Lock()
		k := len(l.waiters) - l.head
		l.mu.Unlock()
		if k == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines parked on the lock, want %d", k, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestEngineLockOrder parks waiters one at a time and checks the order in
// which the lock serves them: newest first, but every fifoEvery-th
// hand-over to the oldest.
func TestEngineLockOrder(t *testing.T) {
	var l engineLock
	l.Lock()
	const n = 2*fifoEvery + 3
	got := make(chan int, n)
	for i := range n {
		go func() {
			l.Lock()
			got <- i
			l.Unlock()
		}()
		waitParked(t, &l, i+1)
	}
	l.Unlock()
	// Simulate the hand-overs on a list to know the order.
	var want []int
	q := make([]int, n)
	for i := range q {
		q[i] = i
	}
	for k := 1; len(q) > 0; k++ {
		if k%fifoEvery == 0 {
			want, q = append(want, q[0]), q[1:]
		} else {
			want, q = append(want, q[len(q)-1]), q[:len(q)-1]
		}
	}
	for k, w := range want {
		if g := <-got; g != w {
			t.Fatalf("hand-over %d went to waiter %d, want %d (order %v)", k+1, g, w, want)
		}
	}
	if !l.TryLock() {
		t.Fatal("the lock is held after every waiter unlocked it")
	}
	if l.TryLock() {
		t.Fatal("TryLock took a held lock")
	}
	l.Unlock()
}

// TestEngineLockExclusion has many goroutines increment a counter under the
// lock, with TryLock mixed in: the count must be exact (and -race must
// find no race).
func TestEngineLockExclusion(t *testing.T) {
	var l engineLock
	var wg sync.WaitGroup
	count, want := 0, 0
	for g := range 16 {
		want += 2000
		wg.Go(func() {
			for i := range 2000 {
				if (i+g)%3 == 0 && l.TryLock() {
					count++
					l.Unlock()
					continue
				}
				l.Lock()
				count++
				l.Unlock()
			}
		})
	}
	wg.Wait()
	if count != want {
		t.Fatalf("count %d, want %d", count, want)
	}
}

// TestEngineLockFreeSkipsWaiters checks that a free lock is taken and
// released without the waiters' mutex, whatever waiters there are: while a
// waiter woken by an unlock has not run to try again, every take and release
// would otherwise go through that mutex. At GOMAXPROCS=1 a woken waiter
// waits for the running goroutine to block, and parallel fib took the slow
// path for 2.1 million of its 2.5 million locks (9,000 with this).
func TestEngineLockFreeSkipsWaiters(t *testing.T) {
	for _, tc := range []struct {
		name  string
		state int64
	}{
		{"woken waiter", lockWoken},
		{"woken and parked waiters", lockWoken + 3*lockWaiter},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l engineLock
			l.state.Store(tc.state)
			l.mu.Lock() // a slow path would wait for it
			done := make(chan struct{})
			go func() {
				defer close(done)
				l.Lock()
				//lint:ignore SA2001 a take and release is what is tested
				l.Unlock()
				if !l.TryLock() {
					t.Error("TryLock did not take the free lock")
					return
				}
				l.Unlock()
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("taking a free lock waited for the waiters' mutex")
			}
			l.mu.Unlock()
			if s := l.state.Load(); s != tc.state {
				t.Fatalf("state %#x after a take and release, want %#x", s, tc.state)
			}
		})
	}
}

// BenchmarkEngineLock times a take and release of a free lock (the cost at
// every locked event of parallel accounting without contention) and of a
// contended one, beside sync.Mutex.
func BenchmarkEngineLock(b *testing.B) {
	b.Run("free", func(b *testing.B) {
		var l engineLock
		for b.Loop() {
			l.Lock()
			//lint:ignore SA2001 a take and release is what is timed
			l.Unlock()
		}
	})
	b.Run("free/sync.Mutex", func(b *testing.B) {
		var l sync.Mutex
		for b.Loop() {
			l.Lock()
			//lint:ignore SA2001 a take and release is what is timed
			l.Unlock()
		}
	})
	b.Run("contended", func(b *testing.B) {
		var l engineLock
		n := 0
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				l.Lock()
				n++
				l.Unlock()
			}
		})
	})
	b.Run("contended/sync.Mutex", func(b *testing.B) {
		var l sync.Mutex
		n := 0
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				l.Lock()
				n++
				l.Unlock()
			}
		})
	})
}

// TestEngineLockReusesWaiters parks n goroutines twice and checks that the
// second round takes its wake-ups from those of the first, none made anew:
// a new one is an allocation deep on a goroutine's small stack (see free).
func TestEngineLockReusesWaiters(t *testing.T) {
	var l engineLock
	const n = 6
	taken := 0
	round := func() map[*waiter]bool {
		l.Lock()
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				l.Lock()
				taken++
				l.Unlock()
			})
			waitParked(t, &l, i+1)
		}
		l.Unlock()
		wg.Wait()
		l.mu.Lock()
		defer l.mu.Unlock()
		seen := make(map[*waiter]bool)
		for _, w := range l.free {
			seen[w] = true
		}
		return seen
	}
	first := round()
	if len(first) != n {
		t.Fatalf("%d wake-ups kept after %d goroutines parked once each, want %d", len(first), n, n)
	}
	second := round()
	if taken != 2*n {
		t.Fatalf("the lock was taken %d times, want %d", taken, 2*n)
	}
	for w := range second {
		if !first[w] {
			t.Fatalf("the second round made a new wake-up (%d kept, %d after the first round)", len(second), len(first))
		}
	}
	if len(second) != n {
		t.Fatalf("%d wake-ups kept after the second round, want %d", len(second), n)
	}
}
