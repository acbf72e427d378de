package missingdone_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/spanprof/spanprof/analysis/internal/goldencheck"

	"github.com/spanprof/spanprof/analysis/missingdone"
)

func Test(t *testing.T) {
	analysistest.RunWithSuggestedFixes(t, analysistest.TestData(), missingdone.Analyzer, "a")
}

// TestGoldenCompiles checks that the fixed source type-checks.
func TestGoldenCompiles(t *testing.T) {
	goldencheck.TypeCheck(t, analysistest.TestData(), "a")
}
