package rewrite

import (
	"bytes"
	"fmt"
	"go/build/constraint"
	"go/format"
	"go/token"
	"go/version"
	"strconv"

	"github.com/dave/dst"
	"github.com/dave/dst/decorator"

	"github.com/spanprof/spanprof/rewrite/internal/linedir"
)

// usesRuntime reports whether the file refers to the runtime's alias.
func usesRuntime(f *dst.File) bool {
	found := false
	dst.Inspect(f, func(n dst.Node) bool {
		if id, ok := n.(*dst.Ident); ok && id.Name == shadowAlias {
			found = true
		}
		return !found
	})
	return found
}

// needGenerics lets a file whose language version is older than go1.18
// call the runtime's generic entry points (Leave, EnterAfter, GroupGo, …):
// it adds go1.18 to the file's build constraint. The compiler then reads
// that file alone at max(go1.18, go1.21) = go1.21 (a file's //go:build
// version is never taken below go1.21), which adds generics and builtins
// but keeps what older code means: a for loop's variable is still shared
// by its iterations below go1.22. The constraint is a comment of the
// decorated file, so the //line directives added afterwards keep the
// file's positions true.
func needGenerics(f *dst.File, fileVersion string) error {
	if fileVersion == "" || !version.IsValid(fileVersion) || version.Compare(fileVersion, "go1.18") >= 0 {
		return nil
	}
	var old []constraint.Expr
	plusBuild := false
	for _, c := range f.Decs.Start {
		if !constraint.IsGoBuild(c) && !constraint.IsPlusBuild(c) {
			continue
		}
		x, err := constraint.Parse(c)
		if err != nil {
			return fmt.Errorf("build constraint %q: %w", c, err)
		}
		if constraint.IsGoBuild(c) {
			old, plusBuild = []constraint.Expr{x}, false
		} else if len(old) == 0 || plusBuild {
			old, plusBuild = append(old, x), true
		}
	}
	var expr constraint.Expr = &constraint.TagExpr{Tag: "go1.18"}
	for _, x := range old {
		expr = &constraint.AndExpr{X: expr, Y: x}
	}
	line := "//go:build " + expr.String()
	if len(old) == 0 {
		f.Decs.Start = append(dst.Decorations{line, "\n"}, f.Decs.Start...)
		return nil
	}
	// Replace the first constraint line; the others (// +build lines)
	// are folded into it.
	var out dst.Decorations
	done := false
	for _, c := range f.Decs.Start {
		if constraint.IsGoBuild(c) || constraint.IsPlusBuild(c) {
			if !done {
				out = append(out, line)
				done = true
			}
			continue
		}
		out = append(out, c)
	}
	f.Decs.Start = out
	return nil
}

// addImport imports the runtime under its alias, in an import declaration
// of its own after the file's imports, so that theirs stay as they are.
func addImport(f *dst.File) {
	spec := &dst.ImportSpec{
		Name: dst.NewIdent(shadowAlias),
		Path: &dst.BasicLit{Kind: token.STRING, Value: strconv.Quote(shadowPath)},
	}
	decl := &dst.GenDecl{Tok: token.IMPORT, Specs: []dst.Spec{spec}}
	decl.Decs.Before = dst.EmptyLine
	decl.Decs.After = dst.EmptyLine
	i := 0
	for i < len(f.Decls) {
		if g, ok := f.Decls[i].(*dst.GenDecl); !ok || g.Tok != token.IMPORT {
			break
		}
		i++
	}
	f.Decls = append(f.Decls[:i], append([]dst.Decl{decl}, f.Decls[i:]...)...)
}

// printFile prints a file that applyFile changed, formatted, with the
// //line directives that keep its positions true; in an overlay, it starts
// with one that names the original.
func printFile(prog *Program, pkg *Package, fr *fileRewriter, dec *decorator.Decorator, df *dst.File) ([]byte, int, error) {
	r := decorator.NewRestorer()
	restored, err := r.RestoreFile(df)
	if err != nil {
		return nil, 0, err
	}
	var buf bytes.Buffer
	if err := format.Node(&buf, r.Fset, restored); err != nil {
		return nil, 0, err
	}
	src, conflicts, err := lineDirectives(pkg.Fset, fr, dec, r, restored, buf.Bytes())
	if err != nil {
		return nil, 0, err
	}
	if prog.cfg.Mode == Overlay {
		src = append([]byte(linedir.Directive(fr.name, 1)+"\n"), src...)
	}
	return src, conflicts, nil
}
