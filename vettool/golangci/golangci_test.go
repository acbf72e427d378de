package golangci_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/golangci/plugin-module-register/register"

	"github.com/spanprof/spanprof/vettool/golangci"
)

func names(t *testing.T, p register.LinterPlugin) []string {
	t.Helper()
	as, err := p.BuildAnalyzers()
	if err != nil {
		t.Fatal(err)
	}
	var ns []string
	for _, a := range as {
		ns = append(ns, a.Name)
	}
	return ns
}

// TestPluginLoads does what golangci-lint does with a module plugin: look it
// up by name in the registry, construct it from settings, build analyzers.
func TestPluginLoads(t *testing.T) {
	newPlugin, err := register.GetPlugin(golangci.Name)
	if err != nil {
		t.Fatal(err)
	}
	p, err := newPlugin(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(t, p), []string{"emptywait", "finegrain", "missingdone", "regionend", "waitcycle"}; !slices.Equal(got, want) {
		t.Errorf("analyzers = %v, want %v", got, want)
	}
	if got := p.GetLoadMode(); got != register.LoadModeTypesInfo {
		t.Errorf("load mode = %q, want %q", got, register.LoadModeTypesInfo)
	}
}

func TestSettings(t *testing.T) {
	tests := []struct {
		name     string
		settings any
		want     []string
		wantErr  string
	}{
		{name: "disable", settings: map[string]any{"disable": []any{"finegrain"}}, want: []string{"emptywait", "missingdone", "regionend", "waitcycle"}},
		{name: "empty", settings: map[string]any{}, want: []string{"emptywait", "finegrain", "missingdone", "regionend", "waitcycle"}},
		{name: "unknown analyzer", settings: map[string]any{"disable": []any{"nosuch"}}, wantErr: `no analyzer "nosuch"`},
		{name: "unknown key", settings: map[string]any{"enable": true}, wantErr: "unknown field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := golangci.New(tt.settings)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("New(%v) error = %v, want one containing %q", tt.settings, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := names(t, p); !slices.Equal(got, tt.want) {
				t.Errorf("analyzers = %v, want %v", got, tt.want)
			}
		})
	}
}
