package rewrite

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/format"
	"os"

	"github.com/dave/dst"
	"github.com/dave/dst/decorator"
	"github.com/dave/dst/dstutil"
)

// apply edits every file of the unit that has something to change and
// prints it.
func (ur *unitRewriter) apply() ([]*File, error) {
	var files []*File
	var errs []error
	for _, fr := range ur.files {
		src, changed, err := ur.applyFile(fr)
		if err != nil {
			errs = append(errs, fmt.Errorf("rewriting %s: %w", ur.prog.relPath(fr.name), err))
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
		files = append(files, &File{Path: fr.name, Old: old, New: src})
	}
	return files, errors.Join(errs...)
}

func (ur *unitRewriter) applyFile(fr *fileRewriter) ([]byte, bool, error) {
	fr.dec = decorator.NewDecorator(ur.fset)
	df, err := fr.dec.DecorateFile(fr.ast)
	if err != nil {
		return nil, false, err
	}
	fr.dst = df
	changed := false
	dstutil.Apply(df, nil, func(c *dstutil.Cursor) bool {
		n := c.Node()
		if n == nil {
			return true
		}
		an := fr.dec.Ast.Nodes[n]
		if an == nil {
			return true
		}
		cur := n
		if e := ur.edits[an]; e != nil {
			cur = e.apply(c)
			changed = true
		}
		if site := ur.enterAfter[an]; site != nil {
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
		if b := ur.before[s]; len(b) > 0 {
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
		if a := ur.after[s]; len(a) > 0 {
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
		return nil, false, nil
	}
	if usesRuntime(df) {
		addImport(df)
		if err := needGenerics(df, ur.info.FileVersions[fr.ast]); err != nil {
			return nil, false, err
		}
	}

	r := decorator.NewRestorer()
	restored, err := r.RestoreFile(df)
	if err != nil {
		return nil, false, err
	}
	var buf bytes.Buffer
	if err := format.Node(&buf, r.Fset, restored); err != nil {
		return nil, false, err
	}
	src, conflicts, err := lineDirectives(ur.fset, fr, r, restored, buf.Bytes())
	if err != nil {
		return nil, false, err
	}
	ur.stats.LineConflicts += conflicts
	if ur.prog.cfg.Mode == Overlay {
		src = append([]byte(directive(fr.name, 1)+"\n"), src...)
	}
	return src, true, nil
}
