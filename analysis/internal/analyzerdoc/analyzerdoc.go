// Package analyzerdoc extracts an analyzer's documentation from the package
// doc comment of its doc.go, the way golang.org/x/tools' passes do: the text
// under a "# Analyzer <name>" heading, after a "<name>: summary" line.
package analyzerdoc

import (
	"fmt"
	"go/parser"
	"go/token"
	"strings"
)

// MustExtract is [Extract] for package initialisation: it panics on error,
// which can only come from a malformed doc.go in this repository.
func MustExtract(content, name string) string {
	doc, err := Extract(content, name)
	if err != nil {
		panic(err)
	}
	return doc
}

// Extract returns the documentation of analyzer name from content, the source
// of a doc.go file: the section of the package doc comment that starts with
// the heading "# Analyzer name" and whose first line is "name: summary". The
// result is the summary line followed by the rest of the section.
func Extract(content, name string) (string, error) {
	if content == "" {
		return "", fmt.Errorf("extracting doc of %s: empty Go source file", name)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "doc.go", content, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		return "", fmt.Errorf("extracting doc of %s: %w", name, err)
	}
	if f.Doc == nil {
		return "", fmt.Errorf("extracting doc of %s: no package doc comment", name)
	}
	for section := range strings.SplitSeq(f.Doc.Text(), "\n# ") {
		body, ok := strings.CutPrefix(section, "Analyzer "+name)
		if !ok || body == "" || (body[0] != '\n' && body[0] != '\r') {
			continue
		}
		body = strings.TrimSpace(body)
		rest, ok := strings.CutPrefix(body, name+":")
		if !ok {
			return "", fmt.Errorf("extracting doc of %s: heading not followed by a %q line", name, name+": summary")
		}
		return strings.TrimSpace(rest), nil
	}
	return "", fmt.Errorf("extracting doc of %s: no %q heading in the package doc", name, "# Analyzer "+name)
}
