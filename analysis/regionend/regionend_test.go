package regionend_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/spanprof/spanprof/analysis/regionend"
)

func Test(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), regionend.Analyzer, "a")
}
