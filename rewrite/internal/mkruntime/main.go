// Command mkruntime writes rewrite/runtime.mod and rewrite/runtime.sum, the
// go.mod and go.sum of the spanprof runtime as a module of its own, which the
// spanprof command embeds. Run it from the repository root after the
// runtime's dependencies change (go generate in the root package does);
// a test in rewrite fails while they are stale.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spanprof/spanprof/rewrite/internal/runtimemod"
)

func main() {
	mod, sum, err := runtimemod.Generate(".")
	if err == nil {
		err = os.WriteFile(filepath.Join("rewrite", "runtime.mod"), mod, 0o644)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join("rewrite", "runtime.sum"), sum, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mkruntime:", err)
		os.Exit(1)
	}
}
