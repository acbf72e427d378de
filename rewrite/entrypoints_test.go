package rewrite

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// TestEntryPoints type-checks the rewriter's table of the runtime's entry
// points against package shadow: each is an exported function of it with
// the signature the table gives (or a type where the table says so), and
// shadow exports nothing else but the types those signatures name and what
// the spanprof command uses.
func TestEntryPoints(t *testing.T) {
	pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedTypes}, shadowPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) != 1 || len(pkgs[0].Errors) > 0 {
		t.Fatalf("loading %s: %v", shadowPath, pkgs[0].Errors)
	}
	scope := pkgs[0].Types.Scope()
	qual := func(p *types.Package) string {
		if p.Path() == shadowPath {
			return ""
		}
		return p.Name()
	}
	named := map[string]bool{} // shadow's types that the entry points' signatures name
	for _, name := range sortedKeys(entryPoints) {
		want := entryPoints[name]
		obj := scope.Lookup(name)
		switch obj := obj.(type) {
		case nil:
			t.Errorf("shadow.%s: not in package shadow", name)
		case *types.TypeName:
			if want != "type" {
				t.Errorf("shadow.%s is a type, want %s", name, want)
			}
		case *types.Func:
			sig := obj.Type().(*types.Signature)
			if got := signature(sig, qual); got != want {
				t.Errorf("shadow.%s is %s\n\twant %s (the rewriter's entryPoints)", name, got, want)
			}
			namesIn(sig, named)
		default:
			t.Errorf("shadow.%s is a %T, want a function", name, obj)
		}
	}
	// What the spanprof command uses (cmd/spanprof: preflight.go, count.go,
	// whatif.go).
	command := map[string]bool{"DefaultMeasure": true, "EnvRun": true, "EnvStrands": true, "EnvWhatIf": true, "ParseTargets": true}
	for _, name := range scope.Names() {
		if !token.IsExported(name) {
			continue
		}
		if _, ok := entryPoints[name]; !ok && !named[name] && !command[name] {
			t.Errorf("shadow exports %s, which neither rewritten code nor the spanprof command uses", name)
		}
	}
}

// TestEntryPointsCoverGeneratedCode: every name of the runtime in the
// rewriter's outputs (the golden files, a generated file with a TestMain)
// is in the table.
func TestEntryPointsCoverGeneratedCode(t *testing.T) {
	var srcs [][]byte
	goldens, _ := filepath.Glob(filepath.Join("testdata", "*", "*.golden"))
	for _, g := range goldens {
		b, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, b)
	}
	gen, err := generated("p", tableTest, []siteInfo{{File: "a.go", Line: 1, Func: "p.f", Caller: "p.g", Kind: "call"}}, true, false, "")
	if err != nil {
		t.Fatal(err)
	}
	srcs = append(srcs, gen)
	used := regexp.MustCompile(regexp.QuoteMeta(shadowAlias) + `\.(\w+)`)
	seen := map[string]bool{}
	for _, src := range srcs {
		for _, m := range used.FindAllSubmatch(src, -1) {
			seen[string(m[1])] = true
		}
	}
	for _, name := range sortedKeys(seen) {
		if _, ok := entryPoints[name]; !ok {
			t.Errorf("generated code calls %s.%s, which is not in entryPoints", shadowAlias, name)
		}
	}
	if len(seen) < 25 {
		t.Errorf("found only %d entry points in the golden files: %v", len(seen), sortedKeys(seen))
	}
}

// TestEntryPointsAreConstants: the rewriter names the runtime's functions
// through entrypoints.go's constants, never by a literal.
func TestEntryPointsAreConstants(t *testing.T) {
	fset := token.NewFileSet()
	files, _ := filepath.Glob("*.go")
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "entrypoints.go" {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				if id, ok := call.Fun.(*ast.Ident); ok && (id.Name == "rt" || id.Name == "rtCall") && len(call.Args) > 0 {
					if _, ok := call.Args[0].(*ast.Ident); !ok {
						if _, ok := call.Args[0].(*ast.IndexExpr); !ok {
							t.Errorf("%s: %s names the runtime's function by %T, not by a constant of entrypoints.go", fset.Position(call.Pos()), id.Name, call.Args[0])
						}
					}
				}
			}
			return true
		})
	}
}

// signature writes sig as entryPoints does.
func signature(sig *types.Signature, qual types.Qualifier) string {
	var b strings.Builder
	b.WriteString("func")
	if tps := sig.TypeParams(); tps.Len() > 0 {
		b.WriteString("[")
		for i := range tps.Len() {
			if i > 0 {
				b.WriteString(", ")
			}
			tp := tps.At(i)
			b.WriteString(tp.Obj().Name() + " " + types.TypeString(tp.Constraint(), qual))
		}
		b.WriteString("]")
	}
	typ := func(t types.Type) string {
		if sig, ok := t.(*types.Signature); ok {
			return signature(sig, qual) // parameter names left out here too
		}
		return types.TypeString(t, qual)
	}
	tuple := func(tup *types.Tuple, variadic bool) string {
		var s []string
		for i := range tup.Len() {
			t := tup.At(i).Type()
			if variadic && i == tup.Len()-1 {
				s = append(s, "..."+typ(t.(*types.Slice).Elem()))
			} else {
				s = append(s, typ(t))
			}
		}
		return strings.Join(s, ", ")
	}
	b.WriteString("(" + tuple(sig.Params(), sig.Variadic()) + ")")
	switch sig.Results().Len() {
	case 0:
	case 1:
		b.WriteString(" " + tuple(sig.Results(), false))
	default:
		b.WriteString(" (" + tuple(sig.Results(), false) + ")")
	}
	return b.String()
}

// namesIn adds the names of the package-level types that sig mentions.
func namesIn(sig *types.Signature, names map[string]bool) {
	var walk func(types.Type)
	walk = func(t types.Type) {
		switch t := t.(type) {
		case *types.Named:
			names[t.Obj().Name()] = true
			for i := range t.TypeArgs().Len() {
				walk(t.TypeArgs().At(i))
			}
		case *types.Pointer:
			walk(t.Elem())
		case *types.Slice:
			walk(t.Elem())
		case *types.Signature:
			namesIn(t, names)
		case *types.Interface:
			for i := range t.NumEmbeddeds() {
				walk(t.EmbeddedType(i))
			}
		}
	}
	for _, tup := range []*types.Tuple{sig.Params(), sig.Results()} {
		for i := range tup.Len() {
			walk(tup.At(i).Type())
		}
	}
	for i := range sig.TypeParams().Len() {
		walk(sig.TypeParams().At(i).Constraint())
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
