// Package spanprof is the root of the spanprof module. It carries the source
// of the spanprof runtime (the packages that instrumented code imports, and
// parlib and region, which programs import themselves) so that the spanprof command can give any module the runtime it
// builds against without a network or a published release: `spanprof run`
// writes this source to a cache directory once and builds in a temporary
// go.work that uses it, and `spanprof rewrite -w` copies it into the
// module, in .spanprof/runtime.
package spanprof

import (
	"embed"
	"io/fs"
)

//go:generate go run ./rewrite/internal/mkruntime

// runtimeFS holds the runtime's packages, the CPU profile its builds
// compile shadow and perf with (shadow/engine.pgo, written by bench/pgo),
// and the go.mod and go.sum of the runtime as a module of its own
// (rewrite/runtime.mod and runtime.sum).
//
//go:embed shadow/*.go shadow/*.s shadow/engine.pgo perf/*.go perf/*.s spanprofile/*.go parlib/*.go region/*.go rewrite/runtime.mod rewrite/runtime.sum
var runtimeFS embed.FS

// RuntimeSource returns the source of the runtime: the directories shadow,
// perf, spanprofile, parlib and region (test files included; whoever writes them out
// leaves those behind), and rewrite/runtime.mod and rewrite/runtime.sum.
func RuntimeSource() fs.FS { return runtimeFS }
