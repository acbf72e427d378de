// Package perf reads the measures that spanprof uses to time strands: the
// monotonic clock, the thread's running time (cpu), hardware instruction and
// cycle counters, and the thread's task clock. What each measure counts and
// leaves out, for users, is docs/measures.md; this is how they are read.
//
// The shadow runtime reads a measure at every parallel-control event (spawn,
// sync, call entry and exit), millions of times a second, and the difference
// between two reads is the length of a strand. Read is therefore the hot path:
// it never allocates, never touches a map or a lock, and makes a system call
// only where the measure has no cheaper way.
//
// Per-thread measures (cpu, instructions, cycles, task-clock) count for the OS
// thread that opened them: open and read them from a goroutine locked with
// runtime.LockOSThread. With RDPMC, a read from another thread returns a
// stale or foreign count.
//
// # How each measure is read
//
// Source names the path a Measure took:
//
//	measure       Source                      per Read, busy 2-vCPU VM
//	cpu           tsc or nanotime,            the clock's, within noise, plus one
//	              +thread-cputime             clock_gettime (3.5–4.3 µs) per check period
//	clock         tsc, tsc (checked),         19 ns (tsc); 47–52 ns (nanotime)
//	              or nanotime
//	instructions  rdpmc or read(2)            4.7 µs (read(2); RDPMC 10–13 µs, trapped)
//	cycles        rdpmc or read(2)            2.4 µs (rdpmc; read(2) 4.5 µs)
//	task-clock    read(2)                     1.5 µs
//	synthetic     (Advance moves it)          5 ns; tests only, not in Names
//
// The costs are medians of five runs of
// `go test -run X -bench . -benchtime 100000x -count 5 ./perf/`
// (BenchmarkRead, BenchmarkClockPath, BenchmarkCounterPath,
// BenchmarkThreadTime) on a 2-vCPU AMD EPYC Firecracker VM (Linux 6.18;
// at the time its clock source was tsc and it exposed hardware counters)
// while other builds kept the load average between 2 and 4. On an idle machine the system calls cost several times
// less (about 300 ns for task-clock); on bare metal RDPMC takes tens of
// nanoseconds.
//
//   - clock (clock.go) uses the time-stamp counter only on amd64, and only
//     when CPUID reports an invariant TSC and RDTSCP and, on Linux, the
//     kernel's clock source is tsc, or when the kernel keeps time with
//     another source but /proc/cpuinfo shows tsc_reliable, and then
//     checked against runtime.nanotime every 10 ms (tscUsable, tscWatch);
//     otherwise runtime.nanotime. The first Open spends 1 ms calibrating.
//   - cpu (cpu.go) reads the clock at every event and the thread's CPU time
//     once per check period of clock (DefaultPeriod, or 100 times the
//     read's cost where that is longer, up to MaxPeriod), and subtracts from the open strand
//     the time the thread did not run. Its clock is the time-stamp counter
//     wherever the TSC is invariant (tscInvariant), whatever the kernel's
//     clock source, because every check compares it with runtime.nanotime
//     and gives it up if they part (cpuClock.tscCheck): 12 ns a read
//     against nanotime's 30 on a kvm-clock VM (Oxide Virtual Turin-like,
//     BenchmarkRead/cpu). Default returns cpu where the system
//     has a per-thread CPU clock (every unix), clock elsewhere. Stats says
//     what it excluded, how often, and what the checks cost. Why
//     clock_gettime(CLOCK_THREAD_CPUTIME_ID): BenchmarkThreadTime timed the
//     ways a thread can learn how long it did not run, here, busy:
//     clock_gettime 4.3 µs, getrusage(RUSAGE_THREAD) 3.8 µs (but it counts
//     context switches, not their length), the task-clock counter 3.5 µs
//     (needs perf_event_open, which seccomp often forbids),
//     /proc/thread-self/schedstat 6.3 µs. The perf mmap page's time_running
//     would be free to read, but the kernel sets cap_user_time only for
//     hardware events, which many VMs lack. TestCPUFollowsThreadTime pins
//     the measured thread and a busy one to one CPU and checks that cpu
//     reads the thread's CPU time; TestCPUExcludesSleep checks that a 30 ms
//     sleep reads under 5 ms.
//   - instructions, cycles and task-clock (counter_linux.go) are perf
//     events of the thread that opened them, opened with exclude_kernel so
//     that they work for unprivileged users under the default
//     kernel.perf_event_paranoid=2. Where the kernel sets cap_user_rdpmc,
//     Read can follow the perf_event_mmap_page seqlock protocol with RDPMC
//     (amd64 only); Open times RDPMC against read(2) and keeps the faster,
//     because a hypervisor may trap RDPMC. Outside Linux they do not open.
//
// Overhead(m, n, event) returns the median cost of one instrumented event
// (two back-to-back Reads plus event), which the runtime subtracts from each
// strand: 70–80 ns for the clock on that VM. Close can be called more than
// once, and a Read after Close returns the last value read.
//
// # When a counter cannot be opened
//
// Open returns an *OpenError (wrapping the errno) whose message is one line
// naming the cause and the measure to use instead; docs/measures.md lists
// the messages.
package perf
