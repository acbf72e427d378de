//go:build linux

package perf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"unsafe"

	perfutils "github.com/hodgesds/perf-utils"
	"golang.org/x/sys/unix"
)

// Counters are perf events of the calling thread, counted in user mode only
// (exclude_kernel, exclude_hv), so that an unprivileged user can open them
// under the default kernel.perf_event_paranoid=2 and every measure means the
// same for root and for everyone else.
//
// perf-utils builds the event attributes (CPUInstructionsEventAttr and its
// siblings set exclude_kernel; its NewProfiler does not, which is why
// unprivileged users get EACCES through it). The event itself is opened here
// with unix.PerfEventOpen because the user-space read needs the file
// descriptor to mmap the event's perf_event_mmap_page, which perf-utils
// keeps to itself; and its Profile goes through a sync.Pool whose Put boxes a
// slice, one allocation per read, which the hot path cannot afford.
//
// Read takes one of two paths, chosen at Open by timing both:
//
//   - rdpmc: where the kernel sets cap_user_rdpmc in the mmap page, the
//     documented seqlock protocol of perf_event_mmap_page (lock, index,
//     offset, pmc_width) with RDPMC reads the counter without entering the
//     kernel: tens of nanoseconds on bare metal.
//   - read(2): the count from the file descriptor, a raw system call into a
//     buffer inside the counter (no allocation).
//
// Timing is needed because a hypervisor may trap RDPMC. In this VM (AMD EPYC
// guest of Firecracker, kernel 6.18, under other users' load) the kernel
// offers cap_user_rdpmc for both hardware events, and (BenchmarkCounterPath):
// instructions RDPMC 10 µs against read(2) 4.5 µs, so Open keeps read(2);
// cycles RDPMC 2.2 µs against read(2) 4.5 µs, so Open keeps RDPMC.
// Task-clock, a software event, has no user-space read (its page has neither
// cap_user_rdpmc nor, here, cap_user_time) and costs 1.6 µs through read(2).
//
// Task-clock counts the thread's CPU time in user and kernel mode alike:
// exclude_kernel does not apply to it (a loop of getppid calls advances it at
// the clock's pace).

// mmapPage is the head of struct perf_event_mmap_page (linux/perf_event.h)
// up to pmc_width, the fields the user-space read protocol uses.
type mmapPage struct {
	version       uint32
	compatVersion uint32
	lock          uint32 // seqlock: changes whenever the kernel rewrites the page
	index         uint32 // hardware counter number + 1, or 0 if not on a counter now
	offset        int64  // add to the counter's value
	timeEnabled   uint64
	timeRunning   uint64
	capabilities  uint64
	pmcWidth      uint16 // bits of the hardware counter
}

// capUserRDPMC is the cap_user_rdpmc bit of mmapPage.capabilities.
const capUserRDPMC = 1 << 2

// readPath selects how a counter is read.
type readPath int

const (
	pathAuto    readPath = iota // time both, keep the faster
	pathSyscall                 // read(2) only
	pathUser                    // RDPMC whenever the kernel allows it
)

// counter is a perf event of the thread that opened it.
type counter struct {
	page  *mmapPage // non-nil when Read uses RDPMC
	shift uint      // 64 - pmc_width, to sign-extend RDPMC's value
	fd    int       // -1 once closed
	last  uint64    // last value returned, for Read after Close
	buf   [24]byte  // read(2) buffer: value, time_enabled, time_running

	name, unit string
	mem        []byte // the mmapped page, for munmap
}

func (c *counter) Name() string    { return c.name }
func (c *counter) Unit() string    { return c.unit }
func (c *counter) PerThread() bool { return true }

func (c *counter) source() string {
	if c.page != nil {
		return "rdpmc"
	}
	return "read(2)"
}

// Read returns the thread's count. It must run on the thread that opened the
// counter.
func (c *counter) Read() uint64 {
	if p := c.page; p != nil {
		if v, ok := c.readUser(p); ok {
			c.last = v
			return v
		}
	}
	return c.readSyscall()
}

// readUser follows the protocol documented in linux/perf_event.h for
// perf_event_mmap_page: read lock, then index and offset, then the hardware
// counter, and retry if the kernel rewrote the page meanwhile (the thread was
// preempted or migrated, and its event moved). The writer is the kernel on
// this thread's own CPU, so the atomic loads serve only as compiler barriers.
// It reports false if the kernel has withdrawn cap_user_rdpmc.
func (c *counter) readUser(p *mmapPage) (uint64, bool) {
	for {
		seq := atomic.LoadUint32(&p.lock)
		if atomic.LoadUint64(&p.capabilities)&capUserRDPMC == 0 {
			return 0, false
		}
		idx := atomic.LoadUint32(&p.index)
		count := uint64(atomic.LoadInt64(&p.offset))
		if idx != 0 {
			pmc := rdpmc(idx - 1)
			count += uint64(int64(pmc<<c.shift) >> c.shift)
		}
		if atomic.LoadUint32(&p.lock) == seq {
			return count, true
		}
	}
}

// readSyscall reads the count through the file descriptor. RawSyscall skips
// the scheduler's entersyscall/exitsyscall: reading a counter never blocks.
// On failure (only after Close) it returns the last value.
func (c *counter) readSyscall() uint64 {
	_, _, errno := unix.RawSyscall(unix.SYS_READ, uintptr(c.fd), uintptr(unsafe.Pointer(&c.buf[0])), uintptr(len(c.buf)))
	if errno == 0 {
		c.last = binary.NativeEndian.Uint64(c.buf[:8])
	}
	return c.last
}

// Close closes the event. Closing twice returns nil.
func (c *counter) Close() error {
	if c.fd < 0 {
		return nil
	}
	c.page = nil
	var errs []error
	if c.mem != nil {
		if err := unix.Munmap(c.mem); err != nil {
			errs = append(errs, fmt.Errorf("perf: unmapping %s counter: %w", c.name, err))
		}
		c.mem = nil
	}
	if err := unix.Close(c.fd); err != nil {
		errs = append(errs, fmt.Errorf("perf: closing %s counter: %w", c.name, err))
	}
	c.fd = -1
	return errors.Join(errs...)
}

// openCounter opens the named counter for the calling thread.
func openCounter(name, unit string, hardware bool) (Measure, error) {
	var attr unix.PerfEventAttr
	switch name {
	case Instructions:
		attr = perfutils.CPUInstructionsEventAttr()
	case Cycles:
		attr = perfutils.CPUCyclesEventAttr()
	case TaskClock:
		attr = perfutils.CPUTaskClockEventAttr()
	default:
		panic("perf: no counter " + name)
	}
	return openAttr(name, unit, hardware, attr, pathAuto)
}

// openAttr opens attr for the calling thread (pid 0, any CPU), counting from
// now, and sets up the read path.
func openAttr(name, unit string, hardware bool, attr unix.PerfEventAttr, path readPath) (*counter, error) {
	attr.Bits |= unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv
	attr.Bits &^= unix.PerfBitDisabled | unix.PerfBitInherit
	fd, err := unix.PerfEventOpen(&attr, 0, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		return nil, openError(name, hardware, err)
	}
	c := &counter{fd: fd, name: name, unit: unit}
	if haveRDPMC && path != pathSyscall {
		c.mapPage()
		if c.page != nil && path == pathAuto && !c.userReadFaster() {
			c.unmapPage()
		}
	}
	c.Read()
	return c, nil
}

// mapPage maps the event's perf_event_mmap_page and keeps it if the kernel
// allows RDPMC on it.
func (c *counter) mapPage() {
	mem, err := unix.Mmap(c.fd, 0, os.Getpagesize(), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return // no user-space read; read(2) still works
	}
	p := (*mmapPage)(unsafe.Pointer(&mem[0]))
	if atomic.LoadUint64(&p.capabilities)&capUserRDPMC == 0 || p.pmcWidth == 0 || p.pmcWidth > 64 {
		_ = unix.Munmap(mem)
		return
	}
	c.page, c.mem, c.shift = p, mem, 64-uint(p.pmcWidth)
}

func (c *counter) unmapPage() {
	_ = unix.Munmap(c.mem)
	c.page, c.mem = nil, nil
}

// userReadFaster reports whether RDPMC reads this counter faster than
// read(2), comparing the best of a few short batches of each.
func (c *counter) userReadFaster() bool {
	best := func(read func()) int64 {
		b := int64(1<<63 - 1)
		for range 5 {
			t := nanotime()
			for range 8 {
				read()
			}
			b = min(b, nanotime()-t)
		}
		return b
	}
	p := c.page
	user := best(func() { c.readUser(p) })
	sys := best(func() { c.readSyscall() })
	return user < sys
}

// openError explains a perf_event_open failure in one line, naming the cause
// and the measure to fall back to.
func openError(name string, hardware bool, err error) *OpenError {
	e := &OpenError{Measure: name, Err: err, Fallback: "use -measure cpu (the default)"}
	if hardware {
		e.Fallback = "use -measure cpu (the default) or task-clock"
	}
	var errno unix.Errno
	if !errors.As(err, &errno) {
		e.Cause = err.Error()
		return e
	}
	en := unix.ErrnoName(errno)
	if errno == unix.EOPNOTSUPP {
		en = "EOPNOTSUPP" // the kernel's name; ErrnoName says ENOTSUP, its alias
	}
	if en == "" {
		en = "errno " + strconv.Itoa(int(errno))
	}
	switch errno {
	case unix.ENOENT, unix.ENODEV, unix.EOPNOTSUPP:
		if hardware {
			e.Cause = "hardware counters are not supported on this machine (" + en + ")"
		} else {
			e.Cause = "this perf event is not supported on this machine (" + en + ")"
		}
	case unix.ENOSYS:
		e.Cause = "this kernel has no perf_event_open (" + en + ")"
		e.Fallback = "use -measure cpu (the default)"
	case unix.EACCES, unix.EPERM:
		// Task-clock needs the same permission, so only clock remains.
		e.Fallback = "use -measure cpu (the default)"
		switch level, ok := perfEventParanoid(); {
		case !ok:
			e.Cause = "permission denied (" + en + ")"
		case level > 2:
			e.Cause = "permission denied by kernel.perf_event_paranoid=" + strconv.Itoa(level) + " (" + en + ")"
			e.Fallback = "use -measure cpu (the default), or allow user-mode counting with sysctl kernel.perf_event_paranoid=2"
		default:
			e.Cause = "permission denied although kernel.perf_event_paranoid=" + strconv.Itoa(level) +
				", perhaps by a seccomp filter or security module (" + en + ")"
		}
	case unix.EMFILE, unix.ENFILE:
		e.Cause = "too many open files (" + en + ")"
	case unix.EBUSY:
		e.Cause = "the counters are taken by another user (" + en + ")"
	default:
		e.Cause = "perf_event_open: " + errno.Error() + " (" + en + ")"
	}
	return e
}

// paranoidPath holds the kernel's perf_event_paranoid setting; a variable so
// tests can point it elsewhere.
var paranoidPath = "/proc/sys/kernel/perf_event_paranoid"

// perfEventParanoid returns kernel.perf_event_paranoid.
func perfEventParanoid() (int, bool) {
	b, err := os.ReadFile(paranoidPath)
	if err != nil {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return n, err == nil
}
