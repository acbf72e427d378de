// Package runtimemod computes the go.mod and go.sum of the spanprof runtime
// as a module of its own: the module that the temporary go.mod of a profiled
// build (or the go.mod that `spanprof rewrite -w` edits) replaces
// github.com/spanprof/spanprof with. It requires only what the runtime's
// packages import, so that a profiled module inherits as few requirements as
// possible, and its go.sum holds the lines of every module in the graph of
// those requirements.
package runtimemod

import (
	"bufio"
	"bytes"
	"fmt"
	"go/version"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
)

// MinGo is the lowest go line the runtime's own code compiles with.
const MinGo = "1.23"

// Packages are the packages of the runtime: what instrumented code imports
// (shadow), and parlib and region, which programs import themselves.
var Packages = []string{"./shadow", "./parlib", "./region"}

// Generate computes the runtime's go.mod and go.sum from the module at root
// (this repository), with the go command.
func Generate(root string) (mod, sum []byte, err error) {
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, nil, err
	}
	f, err := modfile.ParseLax("go.mod", gomod, nil)
	if err != nil {
		return nil, nil, err
	}
	// The modules that provide the runtime's packages, and which of them
	// the runtime imports directly.
	out, err := goCmd(root, append([]string{"list", "-deps", "-f", "{{if and .Module (not .Module.Main)}}{{.Module.Path}} {{.Module.Version}}{{end}}"}, Packages...)...)
	if err != nil {
		return nil, nil, err
	}
	versions := make(map[string]string)
	for line := range strings.Lines(string(out)) {
		if p, v, ok := strings.Cut(strings.TrimSpace(line), " "); ok {
			versions[p] = v
		}
	}
	out, err = goCmd(root, append([]string{"list", "-deps", "-f", `{{if and .Module .Module.Main}}{{join .Imports "\n"}}{{end}}`}, Packages...)...)
	if err != nil {
		return nil, nil, err
	}
	direct := make(map[string]bool)
	for imp := range strings.Lines(string(out)) {
		imp = strings.TrimSpace(imp)
		for p := range versions {
			if imp == p || strings.HasPrefix(imp, p+"/") {
				direct[p] = true
			}
		}
	}

	paths := slices.Sorted(func(yield func(string) bool) {
		for p := range versions {
			if !yield(p) {
				return
			}
		}
	})
	// The go line: as low as the requirements allow, since a module that
	// requires the runtime must have a go line at least as high, and
	// raising it changes the language its code is compiled as.
	goVersion := MinGo
	if len(paths) > 0 {
		out, err := goCmd(root, append([]string{"list", "-m", "-f", "{{.GoVersion}}"}, paths...)...)
		if err != nil {
			return nil, nil, err
		}
		for line := range strings.Lines(string(out)) {
			if v := strings.TrimSpace(line); v != "" && version.Compare("go"+v, "go"+goVersion) > 0 {
				goVersion = v
			}
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "module %s\n\ngo %s\n", f.Module.Mod.Path, goVersion)
	if len(paths) > 0 {
		b.WriteString("\nrequire (\n")
		for _, p := range paths {
			comment := ""
			if !direct[p] {
				comment = " // indirect"
			}
			fmt.Fprintf(&b, "\t%s %s%s\n", p, versions[p], comment)
		}
		b.WriteString(")\n")
	}

	// go.sum: the lines of every module version reachable from those
	// requirements in the module graph.
	out, err = goCmd(root, "mod", "graph")
	if err != nil {
		return nil, nil, err
	}
	edges := make(map[string][]string)
	for line := range strings.Lines(string(out)) {
		from, to, ok := strings.Cut(strings.TrimSpace(line), " ")
		if ok {
			edges[from] = append(edges[from], to)
		}
	}
	reach := make(map[string]bool)
	var visit func(string)
	visit = func(n string) {
		if reach[n] || strings.HasPrefix(n, "go@") || strings.HasPrefix(n, "toolchain@") {
			return
		}
		reach[n] = true
		for _, m := range edges[n] {
			visit(m)
		}
	}
	for _, p := range paths {
		visit(p + "@" + versions[p])
	}
	gosum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		return nil, nil, err
	}
	var s bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(gosum))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 3 {
			continue
		}
		if reach[fields[0]+"@"+strings.TrimSuffix(fields[1], "/go.mod")] {
			s.WriteString(sc.Text() + "\n")
		}
	}
	return b.Bytes(), s.Bytes(), sc.Err()
}

func goCmd(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
