package emptywait_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/spanprof/spanprof/analysis/emptywait"
)

func Test(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), emptywait.Analyzer, "a")
}
