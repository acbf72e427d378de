package rewrite

import (
	"errors"
	"fmt"
	"go/ast"
	"os"

	"github.com/dave/dst"
	"github.com/dave/dst/decorator"
	"github.com/dave/dst/dstutil"
)

// apply edits every file of the unit that the plan changes and prints it.
// It returns the changed files and the number of output lines whose
// original lines disagree (Stats.LineConflicts).
func apply(prog *Program, pkg *Package, files []*fileRewriter, p *plan) ([]*File, int, error) {
	var out []*File
	var errs []error
	conflicts := 0
	for _, fr := range files {
		dec, df, changed, err := applyFile(pkg, fr, p)
		var src []byte
		if err == nil && changed {
			var n int
			src, n, err = printFile(prog, pkg, fr, dec, df)
			conflicts += n
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("rewriting %s: %w", prog.relPath(fr.name), err))
			continue
		}
		if !changed {
			continue
		}
		old, err := os.ReadFile(fr.name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, &File{Path: fr.name, Old: old, New: src})
	}
	return out, conflicts, errors.Join(errs...)
}

// applyFile decorates one file and makes the plan's edits to it, bottom-up;
// it reports whether anything changed.
func applyFile(pkg *Package, fr *fileRewriter, p *plan) (*decorator.Decorator, *dst.File, bool, error) {
	dec := decorator.NewDecorator(pkg.Fset)
	df, err := dec.DecorateFile(fr.ast)
	if err != nil {
		return nil, nil, false, err
	}
	changed := false
	dstutil.Apply(df, nil, func(c *dstutil.Cursor) bool {
		n := c.Node()
		if n == nil {
			return true
		}
		an := dec.Ast.Nodes[n]
		if an == nil {
			return true
		}
		cur := n
		if e := p.edits[an]; e != nil {
			cur = e.apply(c)
			changed = true
		}
		if site := p.enterAfter[an]; site != nil {
			// What the edit left there, wrapped.
			x := cur.(dst.Expr)
			w := rtCall(rtEnterAfter, x, site)
			*w.Decorations() = *x.Decorations()
			*x.Decorations() = dst.NodeDecs{}
			c.Replace(w)
			changed = true
		}
		s, ok := an.(ast.Stmt)
		if !ok {
			return true
		}
		if b := p.before[s]; len(b) > 0 {
			// The first statement put before s takes over the blank line
			// and comments above it.
			d := n.Decorations()
			first := b[0].Decorations()
			first.Before, first.Start = d.Before, d.Start
			if first.Before == dst.None {
				first.Before = dst.NewLine
			}
			d.Before, d.Start = dst.NewLine, nil
			for _, x := range b[1:] {
				x.Decorations().Before = dst.NewLine
			}
			for _, x := range b {
				c.InsertBefore(x)
			}
			changed = true
		}
		if a := p.after[s]; len(a) > 0 {
			d := n.Decorations()
			last := a[len(a)-1].Decorations()
			last.After = d.After
			d.After = dst.NewLine
			if outputComment(d.End) {
				// An example's "// Output:" comment, which must end
				// its body (go vet), stays after what follows the
				// statement it trailed.
				last.End, d.End = d.End, nil
			}
			for _, x := range a {
				x.Decorations().Before = dst.NewLine
			}
			for i := len(a) - 1; i >= 0; i-- {
				c.InsertAfter(a[i])
			}
			changed = true
		}
		return true
	})
	if !changed {
		return nil, nil, false, nil
	}
	if usesRuntime(df) {
		addImport(df)
		if err := needGenerics(df, pkg.TypesInfo.FileVersions[fr.ast]); err != nil {
			return nil, nil, false, err
		}
	}
	return dec, df, true, nil
}
