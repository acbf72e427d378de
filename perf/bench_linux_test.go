//go:build linux

package perf

import (
	"runtime"
	"testing"
)

// BenchmarkCounterPath measures both read paths of every counter that opens
// here, whichever Open would choose.
func BenchmarkCounterPath(b *testing.B) {
	for _, name := range []string{Instructions, Cycles, TaskClock} {
		for _, path := range []readPath{pathSyscall, pathUser} {
			sub := name + "/read(2)"
			if path == pathUser {
				sub = name + "/rdpmc"
			}
			b.Run(sub, func(b *testing.B) {
				// The counter belongs to the thread that opens it, and
				// b.Run gives each sub-benchmark a goroutine of its own.
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				c, err := openPath(name, path)
				if err != nil {
					if unavailable(err) {
						b.Skip(err.Error())
					}
					b.Fatal(err)
				}
				defer c.Close()
				if path == pathUser && c.page == nil {
					b.Skip("no user-space read for this event")
				}
				for b.Loop() {
					sink += c.Read()
				}
			})
		}
	}
}
