package analyzerdoc

import (
	"strings"
	"testing"
)

func TestExtract(t *testing.T) {
	t.Parallel()
	const src = `// Package p does things.
//
// # Analyzer other
//
// other: not this one
//
// # Analyzer demo
//
// demo: report demos
//
// More text.
package p
`
	tests := []struct {
		name    string
		content string
		want    string
		wantErr string
	}{
		{name: "demo", content: src, want: "report demos\n\nMore text."},
		{name: "other", content: src, want: "not this one"},
		{name: "missing", content: src, wantErr: "no \"# Analyzer missing\" heading"},
		{name: "demo", content: "package p\n", wantErr: "no package doc comment"},
		{name: "demo", content: "", wantErr: "empty Go source file"},
		{name: "demo", content: "// Package p.\n//\n// # Analyzer demo\n//\n// no summary\npackage p\n", wantErr: "heading not followed"},
	}
	for _, tt := range tests {
		got, err := Extract(tt.content, tt.name)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Extract(%s) error = %v, want one containing %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Extract(%s) = %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
}
