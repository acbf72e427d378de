//go:build linux && (amd64 || arm64)

package shadow

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// pause sleeps for d, not on a Go timer (see watchdog.go): it waits for a
// timerfd in the network poller, as a goroutine waits for a socket.
//
// It used to sleep in nanosleep(2), a system call that keeps the
// goroutine's P: with GOMAXPROCS=1 the profiled goroutine, ready to run,
// then waited for sysmon to take the P back (20 µs to 10 ms), and every
// such take put sysmon back to waking every 20 µs for a millisecond or
// more. On a profiled matmul (0.8 s of CPU) that was 1,274 of sysmon's
// wake-ups against 174 in the unprofiled run, and 7% of the run's CPU
// time in sysmon. A goroutine parked in the poller holds no P. The timerfd
// is no Go timer: a thread the runtime parks in epoll_pwait still shows a
// timeout only for the program's own timers (pendingTimers).
func pause(d time.Duration) {
	pauser.once.Do(func() {
		fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
		if err != nil {
			return
		}
		// A non-blocking descriptor makes os.NewFile register it with
		// the poller. Fd would make it blocking again, so the number is
		// kept apart.
		pauser.fd, pauser.f = fd, os.NewFile(uintptr(fd), "spanprof-watchdog-timer")
	})
	if pauser.f != nil {
		its := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
		var expirations [8]byte
		if unix.TimerfdSettime(pauser.fd, 0, &its, nil) == nil {
			if _, err := pauser.f.Read(expirations[:]); err == nil {
				return
			}
		}
	}
	nanosleep(d)
}

// settledTimers is pendingTimers once the runtime has had the time to
// put a thread in epoll_pwait: a goroutine that pause woke from the poller
// took the poller's thread with it. It sleeps in nanosleep(2), a system
// call that keeps the caller's P until sysmon takes it back, which then
// hands it to a thread that waits in epoll_pwait where a Go timer is
// pending. Where other Ps are idle, sysmon takes a P back from a system
// call only after 10 ms, and it looks every 20 µs to 10 ms, backing off;
// on a busy machine the thread it wakes may wait for a CPU too. So it
// sleeps 20 ms at a time until pendingTimers sees a timer, up to 5 times,
// as the watchdog's nanosleep of 100 ms did before every look. (With one
// sleep of 20 ms, 6 of 30 runs of TestPendingTimers found no thread in
// epoll_pwait; with one of 50 ms, 1 of 40.) The watchdog calls it only
// when the process has been idle.
func settledTimers() int {
	n := 0
	for range 5 {
		nanosleep(20 * time.Millisecond)
		if n = pendingTimers(); n != 0 {
			break
		}
	}
	return n
}

// nanosleep sleeps for d in a system call.
func nanosleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
}

// pauser is pause's timerfd, made at its first call; f is nil where the
// system has none (pause then sleeps in nanosleep).
var pauser struct {
	once sync.Once
	fd   int
	f    *os.File
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
