// Package goldencheck checks that the fixed sources in an analyzer's
// .golden files still compile: analysistest compares them as text only.
package goldencheck

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// TypeCheck copies the GOPATH tree testdata/src into a temporary directory,
// replaces each file of package pkg that has a .golden beside it by that
// golden file, and type-checks pkg there, failing t on any error. It
// reports how many golden files it used, and fails if there were none.
func TypeCheck(t *testing.T, testdata, pkg string) int {
	t.Helper()
	dir := t.TempDir()
	goldens := 0
	src := filepath.Join(testdata, "src")
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dir, "src", rel)
		if strings.HasSuffix(path, ".go.golden") {
			if filepath.Dir(rel) != filepath.FromSlash(pkg) {
				return nil
			}
			target = strings.TrimSuffix(target, ".golden")
			goldens++
		} else if _, err := os.Stat(path + ".golden"); err == nil && filepath.Dir(rel) == filepath.FromSlash(pkg) {
			return nil // replaced by its golden file
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatalf("copying %s: %v", src, err)
	}
	if goldens == 0 {
		t.Fatalf("no .golden files for package %s in %s", pkg, src)
	}
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedTypes | packages.NeedSyntax | packages.NeedTypesInfo | packages.NeedDeps | packages.NeedImports,
		Dir:  dir,
		Env:  append(os.Environ(), "GOPATH="+dir, "GO111MODULE=off", "GOWORK=off"),
	}
	pkgs, err := packages.Load(cfg, pkg)
	if err != nil {
		t.Fatalf("loading fixed %s: %v", pkg, err)
	}
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		for _, e := range p.Errors {
			t.Errorf("fixed source does not compile: %v", e)
		}
	})
	return goldens
}
