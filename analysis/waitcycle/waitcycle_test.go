package waitcycle_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/spanprof/spanprof/analysis/waitcycle"
)

func Test(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), waitcycle.Analyzer, "a")
}
