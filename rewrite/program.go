package rewrite

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/token"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"

	"github.com/spanprof/spanprof/analysis/forkjoin"
)

// A Mode says what rewritten source is for.
type Mode int

const (
	// Overlay: a temporary build, with the rewritten files given to the go
	// command by -overlay. Every rewritten file starts with a //line
	// directive naming the original, so -trimpath and positions see it.
	Overlay Mode = iota
	// InPlace: `spanprof rewrite`, whose files replace the originals.
	InPlace
)

// Config configures loading and rewriting.
type Config struct {
	Dir        string   // where the go command runs; "" is the current directory
	Env        []string // the go command's environment; nil is os.Environ()
	BuildFlags []string // build flags for the go command, such as -tags
	Tests      bool     // rewrite the test files of the named packages and give them a TestMain
	Mode       Mode
	// Deps also rewrites the packages of the main module that the named
	// packages import (run, test and build; not the codemod).
	Deps bool
	// TestOut names the profile that the tests of the named package with
	// the given import path write when no -spanprofile flag is given; nil
	// or "" leaves it to $SPANPROF_OUT.
	TestOut func(pkgPath string) string
}

// A Module is the main module of the packages being rewritten.
type Module struct {
	Path  string
	Dir   string // its root directory
	GoMod string // its go.mod file
}

// Package is a loaded package: go/packages' form, with syntax and types.
type Package = packages.Package

// A Program is the set of packages a command rewrites, loaded.
type Program struct {
	cfg    Config
	Module Module
	Roots  []*Package // the packages the patterns named, without tests
	// Signals says that the program imports os/signal (a test binary's
	// generated main aside): it may handle signals itself.
	Signals bool
	units   []*unit
	inline  map[funcPos][]string // by base name, line and column: the paths as printed
	workDir string
}

// funcPos is where the compiler reports a function in "can inline" lines:
// the name of a function, the receiver list of a method, the func keyword
// of a literal. file is the file's base name: the go command replays a
// cached compilation's output with the paths relative to the directory that
// first compiled it, so only the path's trailing components can be trusted.
type funcPos struct {
	file      string
	line, col int
}

// Result is the outcome of rewriting a program.
type Result struct {
	Files    []*File  // changed and added files, in package order
	Warnings []string // one line each: sites that are not profiled, files left alone
	Stats    Stats
	// Rewritten lists the packages left alone because they are rewritten
	// already (by spanprof rewrite -w).
	Rewritten []string
}

// A File is a file that rewriting changes or adds.
type File struct {
	Path string // absolute
	Old  []byte // the original; nil for a file the rewrite adds
	New  []byte
}

// Stats counts what rewriting instrumented and what it left alone.
type Stats struct {
	Packages          int // packages (and test packages) with changes
	Spawns            int // spawns profiled
	SpawnsNotProfiled int // spawns left as they are (see the warnings)
	SpawnsGoroutine   int // spawns that run as goroutines in serial mode too (see the warnings)
	Signals, Waits    int // join contributions and waits instrumented
	Calls             int // calls of the packages' functions instrumented
	Regions           int // regions (package region) instrumented
	Semaphores        int // buffered-channel semaphores around spawns, modelled as limits
	CallsOut          int // of Calls, calls into other packages (planext.go)
	// CallsFused counts the calls that a spawned literal is made of, not
	// instrumented apart: the spawn's site stands for them (fuse.go).
	CallsFused int
	// Glued counts the call ends glued to the wait after them (glue.go).
	Glued int
	// CallsSkipped counts the calls not instrumented, by reason: the
	// compiler inlines the callee, a deferred call, code that runs on a
	// goroutine serial mode does not profile, a position where no statement
	// can go, more than four results.
	CallsSkipped map[string]int
	// LeftOut names the calls not instrumented that may carry work
	// (file:line and callee), as the summary lists them.
	LeftOut []string
	// CallsArgsInside counts the calls instrumented in a form that starts
	// the invocation before the calls their arguments make (see the
	// warnings): a call whose one argument is a call with several
	// results, f(g()), and a few more (rewrite/doc.go).
	CallsArgsInside int
	// LineConflicts counts output lines whose original lines disagree, so
	// that no //line directive can make every position on them true; 0
	// unless the rewrite joins lines.
	LineConflicts int
}

func (s *Stats) add(t Stats) {
	s.Packages += t.Packages
	s.Spawns += t.Spawns
	s.SpawnsNotProfiled += t.SpawnsNotProfiled
	s.SpawnsGoroutine += t.SpawnsGoroutine
	s.Signals += t.Signals
	s.Waits += t.Waits
	s.Calls += t.Calls
	s.Regions += t.Regions
	s.Semaphores += t.Semaphores
	s.CallsOut += t.CallsOut
	s.CallsFused += t.CallsFused
	s.Glued += t.Glued
	s.CallsArgsInside += t.CallsArgsInside
	s.LeftOut = append(s.LeftOut, t.LeftOut...)
	s.LineConflicts += t.LineConflicts
	for k, v := range t.CallsSkipped {
		if s.CallsSkipped == nil {
			s.CallsSkipped = make(map[string]int)
		}
		s.CallsSkipped[k] += v
	}
}

// Skipped returns the number of calls not instrumented.
func (s Stats) Skipped() int {
	n := 0
	for _, v := range s.CallsSkipped {
		n += v
	}
	return n
}

// String summarizes the counts in one line.
func (s Stats) String() string {
	var b strings.Builder
	regions := ""
	if s.Regions > 0 {
		regions = ", " + plural(s.Regions, "region")
	}
	fmt.Fprintf(&b, "%s, %s, %s%s instrumented", plural(s.Spawns, "spawn"), plural(s.Calls, "call"), plural(s.Signals+s.Waits, "join"), regions)
	if s.Semaphores > 0 {
		fmt.Fprintf(&b, "; %s modelled as a limit", plural(s.Semaphores, "semaphore"))
	}
	if s.CallsFused > 0 {
		how := "its spawn"
		if s.CallsFused > 1 {
			how = "their spawns"
		}
		fmt.Fprintf(&b, "; %s profiled as %s", plural(s.CallsFused, "call"), how)
	}
	if s.SpawnsGoroutine > 0 {
		fmt.Fprintf(&b, "; %s run as goroutines", plural(s.SpawnsGoroutine, "spawn"))
	}
	if s.SpawnsNotProfiled > 0 {
		fmt.Fprintf(&b, "; %s not profiled", plural(s.SpawnsNotProfiled, "spawn"))
	}
	if s.CallsArgsInside > 0 {
		fmt.Fprintf(&b, "; %s charged with their arguments' calls", plural(s.CallsArgsInside, "call"))
	}
	if n := s.Skipped(); n > 0 {
		reasons := slices.Sorted(func(yield func(string) bool) {
			for k := range s.CallsSkipped {
				if !yield(k) {
					return
				}
			}
		})
		var parts []string
		for _, r := range reasons {
			parts = append(parts, fmt.Sprintf("%d %s", s.CallsSkipped[r], r))
		}
		fmt.Fprintf(&b, "; %s not instrumented (%s)", plural(n, "call"), strings.Join(parts, ", "))
	}
	if len(s.LeftOut) > 0 {
		names := slices.Sorted(slices.Values(s.LeftOut))
		more := ""
		if len(names) > maxLeftOutNamed {
			more = fmt.Sprintf(" and %d more", len(names)-maxLeftOutNamed)
			names = names[:maxLeftOutNamed]
		}
		fmt.Fprintf(&b, "; left out where they may carry work: %s%s", strings.Join(names, ", "), more)
	}
	return b.String()
}

// maxLeftOutNamed caps how many left-out calls the summary line names;
// the reports list more.
const maxLeftOutNamed = 3

// plural spells a count of things: "1 call", "2 calls".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.Itoa(n) + " " + thing + "s"
}

// runtimePackages are the packages of this module that are the runtime or
// that the runtime imports: rewriting them would instrument the profiler.
var runtimePackages = []string{"shadow", "perf", "spanprofile", "parlib", "region"}

// SpanprofModule is the module path of spanprof, whose runtime packages are
// never rewritten.
const SpanprofModule = "github.com/spanprof/spanprof"

func isRuntimePackage(path string) bool {
	for _, p := range runtimePackages {
		q := SpanprofModule + "/" + p
		if path == q || strings.HasPrefix(path, q+"/") {
			return true
		}
	}
	return false
}

// Load loads the packages that patterns name, and with cfg.Deps the main
// module's packages they import, with syntax and types. A package that
// does not parse or type-check is an error naming its first problem.
func Load(cfg Config, patterns []string) (*Program, error) {
	if cfg.Dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		cfg.Dir = wd
	}
	if len(patterns) == 0 {
		patterns = []string{"."}
	}
	p := &Program{cfg: cfg, workDir: cfg.Dir}
	env := p.env()

	// First the import graph, cheaply, to find the packages to rewrite:
	// with the tests' imports when tests are rewritten.
	graph, err := packages.Load(&packages.Config{
		Mode:       packages.NeedName | packages.NeedModule | packages.NeedImports | packages.NeedDeps | packages.NeedFiles | packages.NeedForTest,
		Dir:        cfg.Dir,
		Env:        env,
		BuildFlags: cfg.BuildFlags,
		Tests:      cfg.Tests,
	}, patterns...)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", strings.Join(patterns, " "), err)
	}
	if err := p.firstError(graph, false); err != nil {
		return nil, err
	}
	var rootPaths []string
	named := make(map[string]bool)
	for _, r := range graph {
		if r.ForTest != "" || r.Module == nil && strings.HasSuffix(r.PkgPath, ".test") {
			continue // a test variant, or the test main go test generates
		}
		if r.Module == nil || !r.Module.Main {
			return nil, refuse("package %s is not in the main module", r.PkgPath)
		}
		if p.Module.Path == "" {
			p.Module = Module{Path: r.Module.Path, Dir: r.Module.Dir, GoMod: r.Module.GoMod}
		}
		if r.Module.Path != p.Module.Path {
			return nil, refuse("packages of several modules (%s, %s)", p.Module.Path, r.Module.Path)
		}
		if isRuntimePackage(r.PkgPath) && p.Module.Path == SpanprofModule {
			return nil, refuse("package %s is part of the spanprof runtime and cannot be profiled", r.PkgPath)
		}
		if !named[r.PkgPath] {
			named[r.PkgPath] = true
			rootPaths = append(rootPaths, r.PkgPath)
		}
	}
	if len(rootPaths) == 0 {
		return nil, refuse("no packages match %s", strings.Join(patterns, " "))
	}
	seenImports := make(map[string]bool)
	var signals func(q *packages.Package)
	signals = func(q *packages.Package) {
		if seenImports[q.ID] || q.PkgPath == "testing/internal/testdeps" {
			return // testdeps: a test binary's generated main; it catches signals only to fuzz
		}
		seenImports[q.ID] = true
		p.Signals = p.Signals || q.PkgPath == "os/signal"
		for _, imp := range q.Imports {
			signals(imp)
		}
	}
	for _, r := range graph {
		signals(r)
	}
	var deps []string
	if cfg.Deps {
		seen := make(map[string]bool) // by ID: a test variant imports its own variants
		isDep := make(map[string]bool)
		var visit func(q *packages.Package)
		visit = func(q *packages.Package) {
			if seen[q.ID] {
				return
			}
			seen[q.ID] = true
			if q.Module == nil || !q.Module.Main || q.Module.Path != p.Module.Path || (p.Module.Path == SpanprofModule && isRuntimePackage(q.PkgPath)) {
				return
			}
			if !named[q.PkgPath] && !named[strings.TrimSuffix(q.PkgPath, "_test")] && !isDep[q.PkgPath] {
				isDep[q.PkgPath] = true
				deps = append(deps, q.PkgPath)
			}
			for _, imp := range q.Imports {
				visit(imp)
			}
		}
		for _, r := range graph {
			visit(r)
		}
		slices.Sort(deps)
	}

	mode := packages.NeedName | packages.NeedFiles | packages.NeedCompiledGoFiles | packages.NeedImports |
		packages.NeedTypes | packages.NeedTypesInfo | packages.NeedSyntax | packages.NeedTypesSizes |
		packages.NeedModule | packages.NeedForTest
	load := func(paths []string, tests bool) ([]*packages.Package, error) {
		if len(paths) == 0 {
			return nil, nil
		}
		pkgs, err := packages.Load(&packages.Config{Mode: mode, Dir: cfg.Dir, Env: env, BuildFlags: cfg.BuildFlags, Tests: tests}, paths...)
		if err != nil {
			return nil, fmt.Errorf("loading %s: %w", strings.Join(paths, " "), err)
		}
		return pkgs, p.firstError(pkgs, true)
	}
	roots, err := load(rootPaths, cfg.Tests)
	if err != nil {
		return nil, err
	}
	depPkgs, err := load(deps, false)
	if err != nil {
		return nil, err
	}

	// Pick the variant of each package whose files to rewrite: the one
	// compiled with its internal tests when tests are rewritten, so that
	// what the tests do is seen too; and the external test packages.
	byPath := make(map[string]*unit)
	var order []string
	isRoot := make(map[string]bool)
	for _, q := range roots {
		if q.ForTest == "" {
			isRoot[q.PkgPath] = true
		}
	}
	for _, q := range roots {
		switch {
		case q.ForTest == "" && q.Name == "main" && strings.HasSuffix(q.PkgPath, ".test") && isRoot[strings.TrimSuffix(q.PkgPath, ".test")]:
			continue // the test main that go test generates
		case q.ForTest == "":
			p.Roots = append(p.Roots, q)
			if byPath[q.PkgPath] == nil {
				byPath[q.PkgPath] = &unit{pkg: q, named: true}
				order = append(order, q.PkgPath)
			}
		case q.PkgPath == q.ForTest: // the package with its internal tests
			if byPath[q.PkgPath] == nil {
				order = append(order, q.PkgPath)
			}
			byPath[q.PkgPath] = &unit{pkg: q, named: true}
		default: // an external test package
			byPath[q.PkgPath] = &unit{pkg: q, xtest: true, named: true}
			order = append(order, q.PkgPath)
		}
	}
	for _, q := range depPkgs {
		byPath[q.PkgPath] = &unit{pkg: q}
		order = append(order, q.PkgPath)
	}
	for _, path := range order {
		p.units = append(p.units, byPath[path])
	}
	return p, nil
}

// firstError returns the first error of the packages as a refusal: a
// parse or type error with its position if there is one, else the first
// error, without the "# pkg" headers of the go command's messages; types
// says whether type errors count (the import graph alone has none).
func (p *Program) firstError(pkgs []*packages.Package, types bool) error {
	var first, firstPos *packages.Error
	packages.Visit(pkgs, nil, func(q *packages.Package) {
		for i, e := range q.Errors {
			if !types && e.Kind == packages.TypeError {
				continue
			}
			if first == nil {
				first = &q.Errors[i]
			}
			if firstPos == nil && e.Pos != "" && e.Pos != "-" && (e.Kind == packages.TypeError || e.Kind == packages.ParseError) {
				firstPos = &q.Errors[i]
			}
		}
	})
	if firstPos != nil {
		first = firstPos
	}
	if first == nil {
		return nil
	}
	msg := firstLines(first.Msg)
	if pos := first.Pos; pos != "" && pos != "-" {
		// file:line:col, the file relative to the working directory.
		parts := strings.Split(pos, ":")
		if n := len(parts); n >= 3 {
			pos = strings.Join(append([]string{p.relPath(strings.Join(parts[:n-2], ":"))}, parts[n-2:]...), ":")
		}
		msg = pos + ": " + msg
	}
	return refuse("%s", msg)
}

// env is the go command's environment: the configured one, without a
// workspace, unless the module is rewritten already (rewrite -w), whose
// rewritten packages build only in the go.work that -w wrote.
func (p *Program) env() []string {
	env := p.cfg.Env
	if env == nil {
		env = os.Environ()
	}
	return WorkEnv(env, rewrittenWorkspace(p.cfg.Dir))
}

// relPath returns name relative to the working directory when it lies
// below it, else name.
func (p *Program) relPath(name string) string {
	if rel, err := filepath.Rel(p.workDir, name); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return name
}

// analyze runs the forkjoin analyzer on a package, as any driver of
// go/analysis would: the checker gives the pass the package's module, which
// forkjoin's serial fact reads.
func analyze(pkg *packages.Package) (*forkjoin.Result, error) {
	g, err := checker.Analyze([]*analysis.Analyzer{forkjoin.Analyzer}, []*packages.Package{pkg}, &checker.Options{Sequential: true})
	if err != nil {
		return nil, err
	}
	act := g.Roots[0]
	if act.Err != nil {
		return nil, act.Err
	}
	return act.Result.(*forkjoin.Result), nil
}

// Inline asks the compiler which of the packages' functions it inlines
// (go list -export -gcflags=-m, which compiles without linking; with -test
// for the packages whose tests are rewritten), so that calls of them are
// not instrumented, as Cilkprof declines to instrument inlined functions.
// It compiles the original code; a failure refuses the program.
func (p *Program) Inline() error {
	p.inline = make(map[funcPos][]string)
	var plain, tested []string
	for _, u := range p.units {
		switch {
		case u.xtest:
		case u.pkg.ForTest != "" || (p.cfg.Tests && u.named):
			tested = append(tested, u.pkg.PkgPath)
		default:
			plain = append(plain, u.pkg.PkgPath)
		}
	}
	run := func(test bool, pkgs []string) error {
		if len(pkgs) == 0 {
			return nil
		}
		args := []string{"list", "-e=false", "-export", "-gcflags=-m", "-f", "{{if .Error}}{{.Error}}{{end}}"}
		if test {
			args = append(args, "-test")
		}
		args = append(append(args, p.cfg.BuildFlags...), pkgs...)
		cmd := exec.Command("go", args...)
		cmd.Dir = p.cfg.Dir
		cmd.Env = p.env()
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		p.parseInline(out.Bytes())
		if err != nil {
			return refuse("the original code does not build: %s", firstLines(out.String()))
		}
		return nil
	}
	if err := run(false, plain); err != nil {
		return err
	}
	return run(true, tested)
}

// parseInline records the "can inline" lines of the compiler's -m output.
func (p *Program) parseInline(out []byte) {
	for line := range strings.Lines(string(out)) {
		loc, rest, ok := strings.Cut(line, ": ")
		if !ok || !strings.HasPrefix(rest, "can inline ") {
			continue
		}
		parts := strings.Split(loc, ":")
		if len(parts) < 3 {
			continue
		}
		var fp funcPos
		if _, err := fmt.Sscan(parts[len(parts)-2], &fp.line); err != nil {
			continue
		}
		if _, err := fmt.Sscan(parts[len(parts)-1], &fp.col); err != nil {
			continue
		}
		file := filepath.ToSlash(filepath.Clean(strings.Join(parts[:len(parts)-2], ":")))
		// Keep what names the file whatever the directory the output is
		// relative to: drop leading ./ and ../ components.
		for strings.HasPrefix(file, "../") {
			file = file[3:]
		}
		fp.file = path.Base(file)
		p.inline[fp] = append(p.inline[fp], file)
	}
}

// inlinable reports whether the compiler inlines f.
func (p *Program) inlinable(fset *token.FileSet, f *forkjoin.Func) bool {
	if p.inline == nil || f == nil {
		return false
	}
	pos := f.Node.Pos() // a literal's func keyword
	if d, ok := f.Node.(*ast.FuncDecl); ok {
		pos = d.Name.Pos()
		if d.Recv != nil {
			pos = d.Recv.Opening
		}
	}
	q := fset.PositionFor(pos, false)
	abs := filepath.ToSlash(filepath.Clean(q.Filename))
	for _, printed := range p.inline[funcPos{path.Base(abs), q.Line, q.Column}] {
		if abs == printed || strings.HasSuffix(abs, "/"+printed) {
			return true
		}
	}
	return false
}

// firstLines returns the first lines of a go command's error output, joined
// into one line, without the "# pkg" headers.
func firstLines(s string) string {
	var lines []string
	for l := range strings.Lines(s) {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		lines = append(lines, l)
		if len(lines) == 3 {
			break
		}
	}
	return strings.Join(lines, "; ")
}

// Rewrite instruments every package of the program. It returns the
// changed and added files; it writes nothing.
func (p *Program) Rewrite() (*Result, error) {
	res := &Result{}
	var errs []error
	type tables struct {
		pkg             *Package
		dir, name, path string
		sites           [3][]siteInfo
		testMain        table
		named           bool
		tested          bool // it has test files
	}
	var gens []*tables
	byPath := make(map[string]*tables)
	skipped := make(map[string]bool)
	for _, u := range p.units {
		if u.rewritten() {
			path := strings.TrimSuffix(u.pkg.PkgPath, "_test")
			if !skipped[path] {
				skipped[path] = true
				res.Rewritten = append(res.Rewritten, path)
			}
			continue
		}
		files, unitPlan, err := u.rewrite(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		res.Files = append(res.Files, files...)
		res.Warnings = append(res.Warnings, unitPlan.warnings...)
		unitPlan.stats.Packages = 0
		if len(files) > 0 {
			unitPlan.stats.Packages = 1
		}
		res.Stats.add(unitPlan.stats)
		path := strings.TrimSuffix(u.pkg.PkgPath, "_test")
		t := byPath[path]
		if t == nil {
			t = &tables{dir: u.pkg.Dir, path: path, testMain: -1}
			byPath[path] = t
			gens = append(gens, t)
		}
		if u.xtest {
			t.sites[tableXTest] = unitPlan.tables[tableXTest]
		} else {
			t.pkg, t.name = u.pkg, u.pkg.Name
			t.sites[tablePkg], t.sites[tableTest] = unitPlan.tables[tablePkg], unitPlan.tables[tableTest]
		}
		if unitPlan.testMain >= 0 {
			t.testMain = unitPlan.testMain
		}
		t.named = t.named || u.named
		t.tested = t.tested || u.xtest || u.pkg.ForTest != ""
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for _, t := range gens {
		if t.pkg == nil || t.dir == "" || skipped[t.path] {
			continue
		}
		// A package without test files gets no TestMain: go test says
		// "no test files" for it, and a generated one would make it a test
		// binary that writes an empty profile.
		testMain := p.cfg.Tests && t.named && t.tested
		out := ""
		if testMain && p.cfg.TestOut != nil {
			out = p.cfg.TestOut(t.path)
		}
		add := func(name, pkgName string, tab table, withMain bool, userMain bool) error {
			if len(t.sites[tab]) == 0 && !withMain {
				return nil
			}
			path := filepath.Join(t.dir, name)
			if _, err := os.Stat(path); err == nil {
				return refuse("%s exists: spanprof needs that name for a file it generates", p.relPath(path))
			}
			src, err := generated(pkgName, tab, t.sites[tab], withMain, userMain, out)
			if err != nil {
				return err
			}
			res.Files = append(res.Files, &File{Path: path, New: src})
			return nil
		}
		internalMain := testMain && t.testMain != tableXTest
		if err := add(genFile, t.name, tablePkg, false, false); err != nil {
			return nil, err
		}
		if err := add(genTestFile, t.name, tableTest, internalMain, t.testMain == tableTest); err != nil {
			return nil, err
		}
		if err := add(genXTestFile, t.name+"_test", tableXTest, testMain && !internalMain, true); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// SetTestOut sets Config.TestOut after loading, when the packages are
// known.
func (p *Program) SetTestOut(f func(pkgPath string) string) { p.cfg.TestOut = f }
