package shadow

import (
	"fmt"
	"os"
	"runtime/debug"
)

// Go's stack limit. Serial mode runs a spawn's child inline, so spawns
// nested n deep (a fork chain of n links, each spawning the next) are a Go
// recursion n deep, where the program as written keeps a few short
// goroutine stacks. The runtime doubles a goroutine's stack when it fills
// and, when the doubled size would exceed the limit (debug.SetMaxStack: 1 GB
// on 64-bit systems by default, and never more than twice the default),
// dies with "fatal error: stack overflow", a dump of every goroutine's
// stack (the recursion's as the interleaved frames of the program and of
// this package) and no profile. A goroutine's stack can therefore use at
// most the largest power of two within the limit: 512 MiB by default,
// about 2·10⁶ links of examples/deepchain.
//
// A spawn in serial mode from a function deeper than that, less a margin
// for what the child itself calls, stops the run instead: one line on
// stderr that names the site, the depth and the way out, the profile of
// what ran (marked "stack"), and exit status 2, as the watchdog does for
// serial mode's other failure (watchdog.go). The check is one comparison of
// the depth that every event measures anyway (depth.go).

// stackCap is the depth beyond which a serial spawn stops the run; all ones
// where depths are not measured (depthOff) or the limit leaves no margin.
var stackCap = ^uintptr(0)

// maxStackCeiling is the runtime's ceiling on debug.SetMaxStack: twice the
// default limit of 64-bit systems (runtime/proc.go).
const maxStackCeiling = 2 * 1_000_000_000

// stackCapFor returns the depth beyond which a spawn stops the run under a
// stack limit of limit bytes, or all ones if the limit leaves no room for a
// margin of 1/16 of the usable stack (at least 256 KiB).
func stackCapFor(limit int) uintptr {
	limit = min(limit, maxStackCeiling)
	if limit <= 0 {
		return ^uintptr(0)
	}
	usable := uintptr(1)
	for usable*2 <= uintptr(limit) {
		usable *= 2
	}
	margin := max(usable/16, 256<<10)
	if usable <= 2*margin {
		return ^uintptr(0)
	}
	return usable - margin
}

// maxStack returns the stack limit that debug.SetMaxStack last set.
func maxStack() int {
	limit := debug.SetMaxStack(maxStackCeiling)
	debug.SetMaxStack(limit)
	return limit
}

// setStackCap sets stackCap from the current limit, where depths are
// measured.
func setStackCap() {
	if depthOff == 0 {
		stackCap = stackCapFor(maxStack())
	}
}

// tooDeep runs where a serial spawn at site comes from depth d, beyond
// stackCap. The program may have raised the limit since the run started:
// then the run goes on. Otherwise it stops the run.
//
//go:noinline
func (e *engine) tooDeep(site SiteID, d uintptr) {
	if setStackCap(); d <= stackCap {
		return
	}
	registry.mu.Lock()
	s := registry.sites[site]
	registry.mu.Unlock()
	setEnded("stack")
	fmt.Fprintf(os.Stderr, "spanprof: %s:%d:%d: serial mode runs each spawn inline, so the spawns nested here are a recursion %d deep that needs more Go stack than its limit of %d bytes allows; the profile of what ran is written; profile this program with -mode parallel, or raise the limit with debug.SetMaxStack\n",
		s.File, s.Line, s.Column, len(e.cur.tasks), maxStack())
	writeProfile()
	os.Exit(2)
}
