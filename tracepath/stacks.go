package tracepath

import (
	"slices"
	"strconv"
	"strings"

	"golang.org/x/exp/trace"

	"github.com/spanprof/spanprof/spanprofile"
)

// Stacks, sites and calling contexts.
//
// A site is a stack frame: a function at a line (an inlined call is a frame
// of its own, as the trace records it). A stack is a list of sites, leaf
// first. A calling context is a folded stack of sites from the root: the
// stack of the go statement that created the goroutine (its creator's
// context), then the goroutine's own frames, with recursion folded as serial
// mode folds it (a site already in the context returns to that frame's
// context). Contexts form a trie; context 0 is the root, the empty stack.

type siteID int32
type stackID int32
type ctxID int32

type siteKey struct {
	fn, file string
	line     uint64
}

type ctxKey struct {
	parent ctxID
	site   siteID
}

type ctxPairKey struct {
	parent ctxID
	stack  stackID
}

type stacks struct {
	trim string // removed from file names under the module root

	sites   []spanprofile.Site
	siteIDs map[siteKey]siteID
	// blocking[s] says the site's function is where goroutines block,
	// inModule[s] that its file is the profiled module's: for trimming
	// event stacks.
	blocking []bool
	inModule []bool

	stacks   [][]siteID // leaf first
	stackIDs map[string]stackID
	trimmed  []stackID // the stack without its leading blocking frames
	// cache maps the trace's stack handles to stacks; handles are per
	// generation, so it is cleared at every generation (sync event).
	cache map[trace.Stack]stackID

	ctxParent []ctxID
	ctxSite   []siteID
	ctxDepth  []int32
	// ctxModule[c] says context c holds a frame of the module, and
	// stackModule[s] that stack s does.
	ctxModule   []bool
	stackModule []bool
	children    map[ctxKey]ctxID
	pairs       map[ctxPairKey]ctxID
}

func newStacks(trim string) *stacks {
	s := &stacks{
		trim:     trim,
		siteIDs:  make(map[siteKey]siteID),
		stackIDs: make(map[string]stackID),
		cache:    make(map[trace.Stack]stackID),
		children: make(map[ctxKey]ctxID),
		pairs:    make(map[ctxPairKey]ctxID),
	}
	// Stack 0 is the empty stack; context 0 is the root.
	s.stacks = append(s.stacks, nil)
	s.trimmed = append(s.trimmed, 0)
	s.stackModule = append(s.stackModule, false)
	s.ctxModule = append(s.ctxModule, false)
	s.stackIDs[""] = 0
	s.ctxParent = append(s.ctxParent, -1)
	s.ctxSite = append(s.ctxSite, -1)
	s.ctxDepth = append(s.ctxDepth, 0)
	return s
}

// newGeneration forgets the stack handles of the previous generation.
func (s *stacks) newGeneration() {
	clear(s.cache)
}

// stack returns the stack of a trace stack handle (0 for none).
func (s *stacks) stack(st trace.Stack) stackID {
	if st == trace.NoStack {
		return 0
	}
	if id, ok := s.cache[st]; ok {
		return id
	}
	var frames []trace.StackFrame
	for f := range st.Frames() {
		frames = append(frames, f)
	}
	// CPU samples' stacks end in runtime.goexit (or runtime.main, then
	// goexit, on the main goroutine), events' stacks do not: drop them, so
	// that both put the same code in the same context.
	for len(frames) > 1 && (frames[len(frames)-1].Func == "runtime.goexit" || frames[len(frames)-1].Func == "runtime.main") {
		frames = frames[:len(frames)-1]
	}
	// A sample taken while a goroutine was being preempted has the
	// preemption's frames, which the signal injected, above the code it
	// was running.
	for len(frames) > 1 && strings.HasPrefix(frames[0].Func, "runtime.asyncPreempt") {
		frames = frames[1:]
	}
	sites := make([]siteID, len(frames))
	for i, f := range frames {
		sites[i] = s.site(f)
	}
	id := s.intern(sites)
	s.cache[st] = id
	return id
}

// intern returns the stack of sites, leaf first.
func (s *stacks) intern(sites []siteID) stackID {
	var key strings.Builder
	for _, x := range sites {
		key.WriteString(strconv.Itoa(int(x)))
		key.WriteByte(',')
	}
	if id, ok := s.stackIDs[key.String()]; ok {
		return id
	}
	id := stackID(len(s.stacks))
	s.stacks = append(s.stacks, sites)
	s.stackIDs[key.String()] = id
	s.trimmed = append(s.trimmed, id)
	s.stackModule = append(s.stackModule, slices.ContainsFunc(sites, func(x siteID) bool { return s.inModule[x] }))
	// An event's stack is where the goroutine stood when the event
	// happened: a channel operation, a lock, a go statement, inside the
	// runtime, sync or a library (errgroup's Go holds the go statement).
	// The time before the event was spent in the code that called them,
	// so event stacks lose their leading frames down to the profiled
	// module's first, or, with none of its frames (or no module known),
	// their runtime frames; never all of them.
	k := slices.IndexFunc(sites, func(x siteID) bool { return s.inModule[x] })
	if k <= 0 {
		k = 0
		for k < len(sites) && s.blocking[sites[k]] {
			k++
		}
	}
	if k > 0 && k < len(sites) {
		s.trimmed[id] = s.intern(sites[k:])
	}
	return id
}

// site returns the site of a frame.
func (s *stacks) site(f trace.StackFrame) siteID {
	key := siteKey{f.Func, f.File, f.Line}
	if id, ok := s.siteIDs[key]; ok {
		return id
	}
	id := siteID(len(s.sites))
	file := f.File
	inModule := false
	if s.trim != "" {
		if rel, ok := strings.CutPrefix(file, s.trim); ok && rel != "" {
			file, inModule = rel, true
		}
	}
	s.sites = append(s.sites, spanprofile.Site{
		File: file, Line: int(f.Line), Func: f.Func, Caller: f.Func, Kind: spanprofile.KindFrame,
	})
	s.blocking = append(s.blocking, blockingPackage(funcPackage(f.Func)))
	s.inModule = append(s.inModule, inModule)
	s.siteIDs[key] = id
	return id
}

// funcPackage returns the import path of a function's package, from its
// name as the runtime writes it: runtime/trace.(*Task).End.func1.
func funcPackage(fn string) string {
	slash := strings.LastIndexByte(fn, '/')
	dot := strings.IndexByte(fn[slash+1:], '.')
	if dot < 0 {
		return fn
	}
	return fn[:slash+1+dot]
}

// blockingPackage reports whether the functions of package pkg are where a
// goroutine blocks, wakes others or starts them, rather than code it
// computes in: the runtime, sync, time.Sleep, iterators' coroutines, the
// tracer's annotations.
func blockingPackage(pkg string) bool {
	switch pkg {
	case "runtime", "sync", "sync/atomic", "time", "iter", "runtime/trace":
		return true
	}
	return strings.HasPrefix(pkg, "internal/")
}

// systemFunc reports whether a goroutine whose outermost function is fn is the
// runtime's own (a GC worker, the sweeper, the scavenger, the finalizer
// goroutine, the tracer's and the CPU profiler's readers and writers)
// rather than the program's. runtime.main is the program's main goroutine.
func systemFunc(fn string) bool {
	switch funcPackage(fn) {
	case "runtime":
		// The main goroutine runs the packages' initialization before
		// main: its outermost frames are runtime.main's doInit then.
		return fn != "runtime.main" && !strings.HasPrefix(fn, "runtime.doInit")
	case "runtime/trace", "runtime/pprof":
		return true
	}
	return false
}

// bottom returns the outermost function of a stack ("" for none): the
// function a goroutine started in.
func (s *stacks) bottom(id stackID) string {
	st := s.stacks[id]
	if len(st) == 0 {
		return ""
	}
	return s.sites[st[len(st)-1]].Func
}

// child returns the context of site x called in context c, folding
// recursion: if x is already in c, the context that ends at it.
func (s *stacks) child(c ctxID, x siteID) ctxID {
	for a := c; a > 0; a = s.ctxParent[a] {
		if s.ctxSite[a] == x {
			return a
		}
	}
	k := ctxKey{c, x}
	if id, ok := s.children[k]; ok {
		return id
	}
	id := ctxID(len(s.ctxParent))
	s.ctxParent = append(s.ctxParent, c)
	s.ctxSite = append(s.ctxSite, x)
	s.ctxDepth = append(s.ctxDepth, s.ctxDepth[c]+1)
	s.ctxModule = append(s.ctxModule, s.ctxModule[c] || s.inModule[x])
	s.children[k] = id
	return id
}

// eventContext returns the context of a piece of a goroutine whose
// creator's context is parent, ended by an event at stack st (trimmed). A
// stack with no frame of the module, in a goroutine that the module's code
// started, is a wrapper's (sync.WaitGroup.Go, errgroup's Go) after the
// module's function returned: the piece was the goroutine's work for the
// go statement, and goes there.
func (s *stacks) eventContext(parent ctxID, st stackID) ctxID {
	if !s.stackModule[st] && s.ctxModule[parent] {
		return parent
	}
	return s.context(parent, st)
}

// context returns the context of a goroutine whose creator's context is
// parent, standing at stack st.
func (s *stacks) context(parent ctxID, st stackID) ctxID {
	if st == 0 {
		return parent
	}
	k := ctxPairKey{parent, st}
	if id, ok := s.pairs[k]; ok {
		return id
	}
	c := parent
	sites := s.stacks[st]
	for i := len(sites) - 1; i >= 0; i-- {
		c = s.child(c, sites[i])
	}
	s.pairs[k] = c
	return c
}

// ctxStack returns the sites of context c, root first.
func (s *stacks) ctxStack(c ctxID) []siteID {
	out := make([]siteID, s.ctxDepth[c])
	for i := len(out) - 1; c > 0; i, c = i-1, s.ctxParent[c] {
		out[i] = s.ctxSite[c]
	}
	return out
}
