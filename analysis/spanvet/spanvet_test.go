package spanvet_test

import (
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis"

	"github.com/spanprof/spanprof/analysis/forkjoin"
	"github.com/spanprof/spanprof/analysis/spanvet"
)

func TestAnalyzers(t *testing.T) {
	as := spanvet.Analyzers()
	if err := analysis.Validate(as); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range as {
		names = append(names, a.Name)
		if !slices.Contains(a.Requires, forkjoin.Analyzer) {
			t.Errorf("%s does not require forkjoin: idioms must come from its result", a.Name)
		}
		if !strings.Contains(a.Doc, "go vet") {
			t.Errorf("%s's doc does not say which go vet checks it leaves to vet", a.Name)
		}
		if a.URL == "" {
			t.Errorf("%s has no URL", a.Name)
		}
	}
	want := []string{"emptywait", "finegrain", "missingdone", "regionend", "waitcycle"}
	if !slices.Equal(names, want) {
		t.Errorf("analyzers = %v, want %v", names, want)
	}
}
