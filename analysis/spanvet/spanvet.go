// Package spanvet lists the analyzers of the spanvet vet tool: the
// diagnostics for scalability mistakes in fork/join code. The vet tool
// (vettool/) and the golangci-lint plugin (vettool/golangci/) both run
// exactly this list.
package spanvet

import (
	"golang.org/x/tools/go/analysis"

	"github.com/spanprof/spanprof/analysis/emptywait"
	"github.com/spanprof/spanprof/analysis/finegrain"
	"github.com/spanprof/spanprof/analysis/missingdone"
	"github.com/spanprof/spanprof/analysis/regionend"
	"github.com/spanprof/spanprof/analysis/waitcycle"
)

// Analyzers returns the diagnostics, sorted by name. They all require
// forkjoin.Analyzer, which drivers run first without listing it.
func Analyzers() []*analysis.Analyzer {
	return []*analysis.Analyzer{
		emptywait.Analyzer,
		finegrain.Analyzer,
		missingdone.Analyzer,
		regionend.Analyzer,
		waitcycle.Analyzer,
	}
}
