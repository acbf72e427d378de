//go:build linux && (amd64 || arm64)

package shadow

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// pause sleeps for d in a system call, not on a Go timer (see watchdog.go).
func pause(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
}

// pendingTimers reports whether a Go timer is pending in an idle process:
// 1 if so, 0 if not, -1 if it cannot tell. When no goroutine can run, the Go
// runtime waits for its next timer in epoll_pwait with a timeout, on one
// thread; every other thread sleeps without one (a futex wait, the
// watchdog's nanosleep). Each thread's /proc/self/task/TID/syscall names
// the system call it is blocked in and its arguments, the fourth of which
// is epoll_pwait's timeout in milliseconds (-1: none).
func pendingTimers() int {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return -1
	}
	read := 0
	for _, t := range tasks {
		data, err := os.ReadFile("/proc/self/task/" + t.Name() + "/syscall")
		if err != nil {
			continue // the thread is gone, or the file is not ours to read
		}
		read++
		f := strings.Fields(string(data))
		if len(f) < 5 {
			continue // running
		}
		nr, err := strconv.Atoi(f[0])
		if err != nil || nr != sysEpollPwait && nr != sysEpollPwait2 {
			continue
		}
		arg, err := strconv.ParseUint(strings.TrimPrefix(f[4], "0x"), 16, 64)
		if err != nil {
			return -1
		}
		if nr == sysEpollPwait2 && arg != 0 || nr == sysEpollPwait && int32(arg) >= 0 {
			return 1
		}
	}
	if read == 0 {
		return -1
	}
	return 0
}
