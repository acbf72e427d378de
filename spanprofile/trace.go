package spanprofile

// Trace mode (package tracepath, docs/trace-mode.md) builds a profile from a
// Go execution trace instead of an instrumented run. Its whole-run values
// are the same (work, span, parallelism), its sites are stack frames
// (KindFrame), and these fields say what the trace held and what the
// analysis left out.

// TraceInfo describes the trace a trace-mode profile was computed from. All
// times are in nanoseconds.
type TraceInfo struct {
	// Events is how many events the trace held, Bytes its size (0 when
	// unknown), and Duration the time from its first event to its last.
	Events   int64 `json:"events"`
	Bytes    int64 `json:"bytes,omitempty"`
	Duration int64 `json:"duration"`
	// Goroutines counts the program's goroutines, whose running time is
	// the work, and Strands their running intervals.
	Goroutines int64 `json:"goroutines"`
	Strands    int64 `json:"strands"`
	// Wakeups counts the goroutines made runnable by another of the
	// program's goroutines (an edge of the DAG each); External those made
	// runnable by nothing the program ran (a timer, the network poller,
	// the runtime), which are no edge.
	Wakeups  int64 `json:"wakeups"`
	External int64 `json:"external_wakeups"`
	// RuntimeGoroutines counts the runtime's own goroutines (GC workers,
	// sweeper, scavenger, finalizers, the tracer's), and RuntimeTime the
	// time they ran, which is not in the work.
	RuntimeGoroutines int64 `json:"runtime_goroutines"`
	RuntimeTime       int64 `json:"runtime_time"`
	// Syscall and Assist are the parts of the work spent in system calls
	// and in GC mark assists; STW is the time the world was stopped.
	Syscall int64 `json:"syscall"`
	Assist  int64 `json:"gc_assist"`
	STW     int64 `json:"stw"`
	// CPUSamples counts the CPU profile samples that placed strand time on
	// stacks, and Sampled that time; the rest of the work is placed on the
	// stack of the event that ended each piece of a strand.
	CPUSamples int64 `json:"cpu_samples"`
	Sampled    int64 `json:"sampled"`
	// Period is the CPU profiler's sampling period as the trace shows it
	// (0 when it has too few samples to tell). Excluded is the clock time
	// left out of the Checked pieces longer than a period, Corrected of
	// them, because their samples show that their thread did not run then
	// (the system ran other processes on its CPU).
	Period    int64 `json:"sample_period,omitempty"`
	Excluded  int64 `json:"excluded,omitempty"`
	Checked   int64 `json:"checked,omitempty"`
	Corrected int64 `json:"corrected,omitempty"`
	// CPU, for spanprof run -mode trace, is the CPU time (user and
	// system, all threads) the traced program used: against the time its
	// goroutines held a P (the work plus RuntimeTime) it says how much of
	// that time their threads really ran. 0 when unknown.
	CPU int64 `json:"cpu,omitempty"`
}

// TaskSummary summarizes the runtime/trace tasks of one type (the taskType
// of trace.NewTask). A task's critical path is the longest path of the DAG
// through the strands that belong to it; its latency is the time from its
// begin to its end.
type TaskSummary struct {
	Type  string `json:"type"`
	Count int64  `json:"count"`
	// Unfinished counts the tasks that had not ended when the trace did;
	// they are in no other figure.
	Unfinished int64 `json:"unfinished,omitempty"`
	// The mean and largest latency, work and span of the ended tasks.
	LatencyMean int64 `json:"latency_mean"`
	LatencyMax  int64 `json:"latency_max"`
	WorkMean    int64 `json:"work_mean"`
	SpanMean    int64 `json:"span_mean"`
	// Slowest are the tasks of longest latency, slowest first, and
	// Functions the functions holding most of their critical paths.
	Slowest   []TaskRun      `json:"slowest"`
	Functions []FunctionTime `json:"functions"`
}

// TaskRun is one task: its ID in the trace and its latency, work and span.
type TaskRun struct {
	ID      uint64 `json:"id"`
	Latency int64  `json:"latency"`
	Work    int64  `json:"work"`
	Span    int64  `json:"span"`
}

// FunctionTime is a function's own time on a set of critical paths (the
// leaf frame's function), and its share of their total length.
type FunctionTime struct {
	Func  string  `json:"func"`
	Span  int64   `json:"span"`
	Share float64 `json:"share"`
}
