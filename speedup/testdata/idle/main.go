// Command idle is a program with a known amount of idle time, for the test
// of the idle-time measurement: it sleeps, leaving every processor idle, or
// keeps goroutines busy until the process has used a given amount of
// processor time.
//
// Usage:
//
//	idle [-sleep duration] [-spin duration] [-goroutines n]
package main

import (
	"flag"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"
)

func main() {
	sleep := flag.Duration("sleep", 0, "sleep for `duration`")
	spin := flag.Duration("spin", 0, "keep goroutines busy until the process has used `duration` of processor time")
	goroutines := flag.Int("goroutines", 1, "spin on `n` goroutines")
	flag.Parse()
	time.Sleep(*sleep)
	// Spinning until the process's own processor time reaches the target,
	// rather than for a wall-clock duration, makes the work the same
	// however loaded the machine is.
	var wg sync.WaitGroup
	counts := make([]int, *goroutines)
	for i := range counts {
		wg.Go(func() {
			for cpu() < *spin {
				for range 10000 {
					counts[i]++
				}
			}
		})
	}
	wg.Wait()
	fmt.Println(len(counts))
}

// cpu returns the user and system time the process has used.
func cpu() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		fmt.Fprintln(os.Stderr, "idle:", err)
		os.Exit(1)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
