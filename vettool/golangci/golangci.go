// Package golangci registers spanvet's analyzers as a golangci-lint module
// plugin named "spanvet". Build a golangci-lint with it using
// `golangci-lint custom` and a .custom-gcl.yml that lists this package (see
// docs/spanvet.md), then enable the linter in .golangci.yml:
//
//	linters:
//	  enable: [spanvet]
//	  settings:
//	    custom:
//	      spanvet:
//	        type: module
//	        description: scalability mistakes in fork/join code
//	        settings:
//	          disable: [finegrain]
package golangci

import (
	"fmt"
	"slices"

	"github.com/golangci/plugin-module-register/register"
	"golang.org/x/tools/go/analysis"

	"github.com/spanprof/spanprof/analysis/spanvet"
)

// Name is the linter's name in golangci-lint's configuration.
const Name = "spanvet"

func init() { register.Plugin(Name, New) }

// Settings are the plugin's settings in .golangci.yml.
type Settings struct {
	// Disable lists analyzers not to run: emptywait, finegrain,
	// missingdone, regionend, waitcycle.
	Disable []string `json:"disable"`
}

// New returns the plugin for settings as golangci-lint decodes them from
// its configuration; unknown keys and analyzer names are errors.
func New(settings any) (register.LinterPlugin, error) {
	s, err := register.DecodeSettings[Settings](settings)
	if err != nil {
		return nil, fmt.Errorf("spanvet settings: %w", err)
	}
	var names []string
	for _, a := range spanvet.Analyzers() {
		names = append(names, a.Name)
	}
	for _, d := range s.Disable {
		if !slices.Contains(names, d) {
			return nil, fmt.Errorf("spanvet settings: disable: no analyzer %q (have %v)", d, names)
		}
	}
	return &plugin{settings: s}, nil
}

type plugin struct{ settings Settings }

// BuildAnalyzers returns the analyzers that are not disabled.
func (p *plugin) BuildAnalyzers() ([]*analysis.Analyzer, error) {
	var as []*analysis.Analyzer
	for _, a := range spanvet.Analyzers() {
		if !slices.Contains(p.settings.Disable, a.Name) {
			as = append(as, a)
		}
	}
	return as, nil
}

// GetLoadMode asks for type information: every analyzer needs it.
func (p *plugin) GetLoadMode() string { return register.LoadModeTypesInfo }
