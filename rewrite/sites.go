package rewrite

import (
	"go/token"
	"path/filepath"
	"strconv"

	"github.com/dave/dst"
)

// A table is one of the static site tables of a package's generated files.
type table int

const (
	tablePkg   table = iota // the package's own files: _spanprofSites in zz_spanprof.go
	tableTest               // its internal test files: _spanprofTestSites in zz_spanprof_test.go
	tableXTest              // the external test package: _spanprofSites in zz_spanprof_x_test.go
)

var tableVars = [...]string{"_spanprofSites", "_spanprofTestSites", "_spanprofSites"}

// A siteInfo is a row of a site table: shadow.SiteInfo, written out.
type siteInfo struct {
	File         string // relative to the module root, slash-separated
	Line, Column int
	Func, Caller string
	Kind         string // spawn or call
	Goroutine    bool   // a spawn that runs as a goroutine in every mode
	// Loop, LimitKind and LimitAt: what the analyzer sees around a spawn
	// (shadow.SiteInfo).
	Loop, LimitKind, LimitAt string
	// Why is, for a call left out, why it is not instrumented: the row
	// is no site, only a name for the reports (shadow.LeftOut).
	Why string
}

// addSite appends a site to the table of the file containing p and
// returns the expression that names it.
func (pl *planner) addSite(fr *fileRewriter, p token.Pos, fn, caller, kind string) dst.Expr {
	q := pl.fset.PositionFor(p, false)
	rel, err := filepath.Rel(pl.prog.Module.Dir, q.Filename)
	if err != nil {
		rel = q.Filename
	}
	t := &pl.tables[fr.table]
	*t = append(*t, siteInfo{File: filepath.ToSlash(rel), Line: q.Line, Column: q.Column, Func: fn, Caller: caller, Kind: kind})
	return siteRef(tableVars[fr.table], len(*t)-1)
}

// siteRef is the expression _spanprofSites+i.
func siteRef(table string, i int) dst.Expr {
	return &dst.BinaryExpr{X: dst.NewIdent(table), Op: token.ADD, Y: &dst.BasicLit{Kind: token.INT, Value: strconv.Itoa(i)}}
}
