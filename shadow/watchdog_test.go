package shadow

import (
	"strings"
	"testing"
)

const stuckDump = `goroutine 1 [chan receive]:
example.com/m/q.Pop(...)
	/m/q/q.go:5
main.main.func1()
	/m/main.go:11 +0x25
github.com/spanprof/spanprof/shadow.Go(0x2, 0xc000012345)
	/cache/spanprof/runtime/shadow/emit.go:30 +0x3c
main.main()
	/m/main.go:10 +0x85

goroutine 18 [running]:
github.com/spanprof/spanprof/shadow.allStacks()
	/cache/spanprof/runtime/shadow/watchdog.go:90 +0x2e
github.com/spanprof/spanprof/shadow.startWatchdog.func1()
	/cache/spanprof/runtime/shadow/watchdog.go:60 +0x4a
created by github.com/spanprof/spanprof/shadow.startWatchdog in goroutine 1
	/cache/spanprof/runtime/shadow/watchdog.go:55 +0x56
`

func TestStuckFindsTheSpawn(t *testing.T) {
	r := stuck("1", stuckDump)
	msg, _, _ := strings.Cut(r, "\x00")
	if want := "spanprof: /m/main.go:10: the spawned goroutine waits (chan receive)"; !strings.HasPrefix(msg, want) {
		t.Errorf("report %q, want it to start with %q", msg, want)
	}
}

func TestStuckIsConservative(t *testing.T) {
	for name, dump := range map[string]string{
		"another goroutine sleeps": stuckDump + "\ngoroutine 7 [sleep]:\ntime.Sleep(0x3b9aca00)\n\t/go/src/runtime/time.go:300 +0x11\n",
		"another waits on I/O":     stuckDump + "\ngoroutine 7 [IO wait]:\ninternal/poll.runtime_pollWait()\n\t/go/src/runtime/netpoll.go:351 +0x85\n",
		"another is runnable":      stuckDump + "\ngoroutine 7 [runnable]:\nmain.work()\n\t/m/main.go:30 +0x11\n",
		"blocked outside a spawn": strings.Replace(strings.Replace(stuckDump, "github.com/spanprof/spanprof/shadow.Go(0x2, 0xc000012345)", "main.helper()", 1),
			"main.main.func1()", "main.other()", 1),
		"the profiled goroutine runs": strings.Replace(stuckDump, "goroutine 1 [chan receive]", "goroutine 1 [runnable]", 1),
	} {
		if r := stuck("1", dump); r != "" {
			msg, _, _ := strings.Cut(r, "\x00")
			t.Errorf("%s: reported %q", name, msg)
		}
	}
}
