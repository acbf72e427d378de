package perf

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

func TestNotRunning(t *testing.T) {
	for _, c := range []struct {
		wall, run, strand, minGap, want uint64
	}{
		{wall: 1000, run: 1000, strand: 500, minGap: 10, want: 0},     // ran all along
		{wall: 1000, run: 1200, strand: 500, minGap: 10, want: 0},     // CPU time read a little later than the clock
		{wall: 1005, run: 1000, strand: 500, minGap: 10, want: 0},     // skew within minGap
		{wall: 5000, run: 1000, strand: 4500, minGap: 10, want: 4000}, // descheduled in the open strand
		{wall: 5000, run: 1000, strand: 300, minGap: 10, want: 300},   // never more than the open strand
		{wall: 1e9, run: 1e6, strand: 1e9, minGap: 2000, want: 999e6}, // asleep
		{wall: 2011, run: 2000, strand: 2011, minGap: 10, want: 11},   // just past minGap
	} {
		if got := notRunning(c.wall, c.run, c.strand, c.minGap); got != c.want {
			t.Errorf("notRunning(wall %d, run %d, strand %d, minGap %d) = %d, want %d", c.wall, c.run, c.strand, c.minGap, got, c.want)
		}
	}
}

// TestCPUExcludesSleep checks that time the thread spends asleep is no
// strand's: a sleep is the plainest case of not running, and needs no
// other process to happen.
func TestCPUExcludesSleep(t *testing.T) {
	lockThread(t)
	m := openOrSkip(t, CPU)
	defer m.Close()
	c0, w0 := m.Read(), nanotime()
	time.Sleep(30 * time.Millisecond)
	sink += spin(1000)
	c1, w1 := m.Read(), nanotime()
	wall, cpu := time.Duration(w1-w0), time.Duration(c1-c0)
	if wall < 30*time.Millisecond {
		t.Fatalf("the clock advanced %v over a 30ms sleep", wall)
	}
	// The thread ran for microseconds; allow for a slow machine.
	if cpu > 5*time.Millisecond {
		t.Errorf("cpu advanced %v over a %v sleep: the sleep was counted", cpu, wall)
	}
	st, _ := Stats(m)
	if st.Corrections < 1 || time.Duration(st.Excluded) < 25*time.Millisecond {
		t.Errorf("stats %+v: want a correction of about the sleep", st)
	}
}

// TestCPUFollowsThreadTime runs a busy loop while another thread competes
// for the same CPU (both pinned to it where the platform allows), so the
// measured thread is descheduled for about half of the loop, and checks
// that cpu reads the thread's CPU time, not the clock.
func TestCPUFollowsThreadTime(t *testing.T) {
	lockThread(t)
	m := openOrSkip(t, CPU)
	defer m.Close()
	cpu, ok := m.(*cpuClock)
	if !ok {
		t.Fatalf("cpu is a %T", m)
	}
	pinned := pinToOneCPU()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		runtime.LockOSThread()
		pinToOneCPU()
		var busy uint64 // not sink, which the test's goroutine writes
		for {
			select {
			case <-stop:
				spinSink.Add(busy)
				return
			default:
				busy += spin(10000)
			}
		}
	}()
	defer func() { close(stop); wg.Wait() }()

	t0, _ := cpu.cpu.read()
	c0, w0 := m.Read(), nanotime()
	// Strands of about 20 µs, as a fine-grained program has.
	for range 5000 {
		sink += spin(2000)
		m.Read()
	}
	c1, w1 := m.Read(), nanotime()
	t1, _ := cpu.cpu.read()
	measured, thread, wall := float64(c1-c0), float64(t1-t0), float64(w1-w0)
	t.Logf("pinned %v: wall %.1fms, thread CPU %.1fms, cpu measure %.1fms, %+v", pinned, wall/1e6, thread/1e6, measured/1e6, cpu.stats)
	// Every check window's error is below the period; the check's own
	// system calls are excluded from the measure but counted in the
	// thread's time.
	if measured > thread*1.05+float64(DefaultPeriod) || measured < thread*0.9 {
		t.Errorf("cpu measured %.2fms where the thread ran %.2fms (wall %.2fms)", measured/1e6, thread/1e6, wall/1e6)
	}
}

// TestCPUGivesUpAJumpingTSC: where the cpu measure reads the TSC, a check
// that finds it out of step with the runtime's clock (a counter that jumped
// forward or back, as one of another CPU or a restored VM would) switches
// to the runtime's clock without a jump in the readings, and the readings
// then follow the thread's time again.
func TestCPUGivesUpAJumpingTSC(t *testing.T) {
	if openTSC() == nil {
		t.Skip("no invariant TSC here")
	}
	for _, c := range []struct {
		name string
		jump int64 // how far the TSC moves against its last check
	}{
		{"forward", int64(time.Second)},
		{"back", -int64(time.Second)},
	} {
		t.Run(c.name, func(t *testing.T) {
			lockThread(t)
			m, err := openCPU(DefaultPeriod)
			if err != nil {
				t.Skip(err)
			}
			if m.tsc == nil {
				t.Fatalf("cpu reads %s where the TSC is invariant", Source(m))
			}
			r0 := m.Read()
			// As if the counter had jumped: the last check's reading
			// moves the other way, and the next Read checks.
			m.anchorTSC -= uint64(c.jump)
			m.checkWall -= m.period
			r1 := m.Read()
			if m.tsc != nil || !m.stats.TSCDisagreed || Source(m) != "nanotime+thread-cputime" {
				t.Fatalf("after a jump of %v the measure reads %s, stats %+v", time.Duration(c.jump), Source(m), m.stats)
			}
			if d := int64(r1 - r0); d < 0 || d > int64(time.Millisecond) {
				t.Errorf("the reading moved %v across the switch; want continuity", time.Duration(d))
			}
			t0, _ := m.cpu.read()
			sink += spin(20000)
			r2 := m.Read()
			t1, _ := m.cpu.read()
			if got, thread := float64(r2-r1), float64(t1-t0); got > thread*1.5+float64(DefaultPeriod) || got < 0 {
				t.Errorf("after the switch the measure advanced %.0f ns where the thread ran %.0f", got, thread)
			}
		})
	}
}

// TestCheckPeriod: the period between checks is the one asked for, or
// longer where reading the thread's CPU time is slow, but never past
// MaxPeriod unless asked for, so a descheduling is still caught in its
// own strand.
func TestCheckPeriod(t *testing.T) {
	if !threadCPUSupported {
		t.Skip("no per-thread CPU clock")
	}
	lockThread(t)
	var tc threadClock
	for _, floor := range []time.Duration{time.Microsecond, DefaultPeriod, 2 * MaxPeriod} {
		p := checkPeriod(floor, &tc)
		t.Logf("floor %v: period %v", floor, p)
		if p < floor || p > max(floor, MaxPeriod) {
			t.Errorf("checkPeriod(%v) = %v, want between %v and %v", floor, p, floor, max(floor, MaxPeriod))
		}
	}
	// A read costs more than 10 ns anywhere (a system call), so a floor
	// of 1 µs must stretch.
	if p := checkPeriod(time.Microsecond, &tc); p <= time.Microsecond {
		t.Errorf("checkPeriod(1µs) = %v: not stretched to 100 reads' cost", p)
	}
	m, err := openCPU(DefaultPeriod)
	if err != nil {
		t.Skip(err)
	}
	if m.period < uint64(DefaultPeriod) || m.period > uint64(MaxPeriod) {
		t.Errorf("the cpu measure checks every %v, want %v to %v", time.Duration(m.period), DefaultPeriod, MaxPeriod)
	}
}
