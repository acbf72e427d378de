//go:build linux

package shadow

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"syscall"
)

// clockTick is the unit of /proc/stat: USER_HZ, 100 on every Linux ABI Go
// supports.
const clockTick = 10_000_000 // nanoseconds

// readMachine reads /proc/stat's CPU totals, the process's CPU time and the
// run delay of thread tid (0: the calling thread's, which it records).
func readMachine(tid int) machine {
	var m machine
	if tid == 0 {
		tid = syscall.Gettid()
	}
	m.threadID = tid
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return m
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := bytes.Fields(line)
	// cpu user nice system idle iowait irq softirq steal guest guest_nice
	if len(f) < 9 || string(f[0]) != "cpu" {
		return m
	}
	v := func(i int) int64 {
		n, _ := strconv.ParseInt(string(f[i]), 10, 64)
		return n
	}
	m.busy = (v(1) + v(2) + v(3) + v(6) + v(7)) * clockTick
	m.steal = v(8) * clockTick
	m.self = int64(processCPU())
	m.cpus = int64(runtime.NumCPU())
	if s, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(tid) + "/schedstat"); err == nil {
		// time on CPU, time waiting on a run queue, time slices
		if f := bytes.Fields(s); len(f) >= 2 {
			if d, err := strconv.ParseInt(string(f[1]), 10, 64); err == nil {
				m.delay, m.delayOK = d, true
			}
		}
	}
	m.ok = true
	return m
}
