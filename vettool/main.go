// Command spanvet reports scalability mistakes in fork/join Go code:
// goroutines that can return without their wg.Done (missingdone), children
// that wait on their own join object (waitcycle), a goroutine per loop
// iteration for a tiny body (finegrain), waits on a join object that
// nothing signals (emptywait), and regions of package region begun and not
// ended in the same function (regionend).
//
// It is a go vet tool:
//
//	go build -o spanvet ./vettool
//	go vet -vettool=$(pwd)/spanvet ./...
//
// and a standalone checker with the usual flags of golang.org/x/tools'
// drivers (-json, -fix, -diff, -c, one flag per analyzer):
//
//	spanvet ./...
//	spanvet -json ./...
//	spanvet -fix ./...
//
// multichecker.Main serves both: when go vet runs the tool with a .cfg file
// (and with -V=full and -flags before it) it hands over to unitchecker.
package main

import (
	"golang.org/x/tools/go/analysis/multichecker"

	"github.com/spanprof/spanprof/analysis/spanvet"
)

func main() { multichecker.Main(spanvet.Analyzers()...) }
