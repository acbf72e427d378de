// Package linedir keeps the positions of a rewritten Go file true: it puts
// //line directives into the printed file so that every line that starts
// an original node or comment, or holds its closing brace, has its
// original line number, in the places gofmt leaves them.
package linedir

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/build/constraint"
	"go/format"
	"go/parser"
	"go/scanner"
	"go/token"
	"reflect"
	"strings"
)

// A File is a rewritten file: its original syntax and the syntax it was
// printed from.
type File struct {
	Fset *token.FileSet // the original's
	Orig *ast.File      // the original syntax, with its comments
	// Name is the file's path, for parsing; LineName is the name the
	// directives give it.
	Name, LineName string
	// Restored is the syntax the printed file was printed from, and
	// Original maps its nodes to the original nodes they come from; nodes
	// the rewrite made are absent.
	Restored *ast.File
	Original map[ast.Node]ast.Node
}

// IsOutputComment reports whether the line comment text is an example's
// output comment ("// Output:" or "// Unordered output:").
func IsOutputComment(text string) bool {
	text = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(text, "//")))
	return strings.HasPrefix(text, "output:") || strings.HasPrefix(text, "unordered output:")
}

// Directive is a //line directive that makes the next line line of file.
func Directive(file string, line int) string {
	return fmt.Sprintf("//line %s:%d:1", file, line)
}

// Insert puts //line directives into printed, the printed form of a
// rewritten file, so that every line that starts an original node or
// comment, or holds a closing brace or parenthesis of one, has its original
// line number: a directive goes before each line where the count since the
// last one would be wrong. It returns the formatted result and the number
// of lines whose original lines disagree (two original lines joined).
func Insert(f File, printed []byte) ([]byte, int, error) {
	anchors, conflicts, err := anchorLines(f, printed)
	if err != nil {
		return nil, 0, err
	}
	t := outLines{lines: splitLines(printed)}
	fixed := t.fixedLines(f.Name, printed)
	at, prefix := t.place(f.LineName, needed(len(t.lines), anchors, fixed), fixed)
	res, err := t.write(at, prefix)
	if err != nil {
		return nil, 0, err
	}
	return res, conflicts, nil
}

// An anchor is the original line of an output line, from the leftmost
// original position on it.
type anchor struct{ col, orig int }

// anchorLines finds the original line of each output line of printed that
// starts an original node or comment or holds its last character, and
// counts the lines whose positions disagree.
func anchorLines(f File, printed []byte) (map[int]anchor, int, error) {
	fset, restored := f.Fset, f.Restored
	outFset := token.NewFileSet()
	out, err := parser.ParseFile(outFset, f.Name, printed, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, 0, fmt.Errorf("parsing the rewritten file: %w", err)
	}
	printedNodes := preorder(out)
	restoredNodes := preorder(restored)
	if len(printedNodes) != len(restoredNodes) {
		return nil, 0, fmt.Errorf("the printed file has %d nodes, the rewritten syntax %d", len(printedNodes), len(restoredNodes))
	}
	toPrinted := make(map[ast.Node]ast.Node, len(restoredNodes))
	for i, n := range restoredNodes {
		if reflect.TypeOf(n) != reflect.TypeOf(printedNodes[i]) {
			return nil, 0, fmt.Errorf("the printed file differs from the rewritten syntax at node %d", i)
		}
		toPrinted[n] = printedNodes[i]
	}

	// anchors[l] is the original line of output line l; a line whose
	// positions disagree conflicts.
	anchors := make(map[int]anchor)
	origLines := make(map[int]map[int]bool)
	mark := func(outPos token.Position, origLine int) {
		if a, ok := anchors[outPos.Line]; !ok || outPos.Column < a.col {
			anchors[outPos.Line] = anchor{outPos.Column, origLine}
		}
		if origLines[outPos.Line] == nil {
			origLines[outPos.Line] = make(map[int]bool)
		}
		origLines[outPos.Line][origLine] = true
	}
	for rn, on := range f.Original {
		pn := toPrinted[rn]
		if on == nil || pn == nil || !on.Pos().IsValid() || !pn.Pos().IsValid() {
			continue
		}
		mark(outFset.PositionFor(pn.Pos(), false), fset.PositionFor(on.Pos(), false).Line)
		// The last character: closing braces and parentheses.
		if on.End().IsValid() && pn.End().IsValid() && on.End() > on.Pos() {
			mark(outFset.PositionFor(pn.End()-1, false), fset.PositionFor(on.End()-1, false).Line)
		}
	}
	// Comments: the original ones, in order, matched by text.
	var printedComments []*ast.Comment
	for _, cg := range out.Comments {
		printedComments = append(printedComments, cg.List...)
	}
	j := 0
	for _, cg := range f.Orig.Comments {
		for _, c := range cg.List {
			k := j
			for k < len(printedComments) && printedComments[k].Text != c.Text {
				k++
			}
			if k == len(printedComments) {
				continue
			}
			mark(outFset.PositionFor(printedComments[k].Pos(), false), fset.PositionFor(c.Pos(), false).Line)
			j = k + 1
		}
	}
	conflicts := 0
	for _, set := range origLines {
		if len(set) > 1 {
			conflicts++
		}
	}
	return anchors, conflicts, nil
}

// outLines are the printed file's lines, each with its newline.
type outLines struct{ lines []string }

// blank reports whether line l (from 1) is empty.
func (t outLines) blank(l int) bool {
	return l >= 1 && l <= len(t.lines) && strings.TrimSpace(t.lines[l-1]) == ""
}

// topComment reports whether line l is a comment at column 1.
func (t outLines) topComment(l int) bool {
	return l >= 1 && l <= len(t.lines) && strings.HasPrefix(t.lines[l-1], "//")
}

// fixedLines returns the lines before which no directive can go.
func (t outLines) fixedLines(name string, printed []byte) map[int]bool {
	// Lines that start inside a token (a raw string or a comment spanning
	// lines) cannot have a directive put before them.
	inside := make(map[int]bool)
	var sc scanner.Scanner
	tf := token.NewFileSet().AddFile(name, -1, len(printed))
	sc.Init(tf, printed, nil, scanner.ScanComments)
	for {
		pos, tok, lit := sc.Scan()
		if tok == token.EOF {
			break
		}
		if n := strings.Count(lit, "\n"); n > 0 && (tok == token.STRING || tok == token.COMMENT) {
			first := tf.Line(pos)
			for l := first + 1; l <= first+n; l++ {
				inside[l] = true
			}
		}
	}

	// An example's "// Output:" comment must be the last comment of its
	// body (go vet, which go test runs, says so), and a directive right
	// above a comment joins it: no directive goes from the comment's first
	// line to the closing brace after it. Those lines keep the count of the
	// lines before them, and the next line that needs a directive gets one.
	for l := 1; l <= len(t.lines); l++ {
		text := strings.TrimSpace(t.lines[l-1])
		if !strings.HasPrefix(text, "//") || !IsOutputComment(text) || t.topComment(l) {
			continue
		}
		for ; l <= len(t.lines) && (strings.HasPrefix(strings.TrimSpace(t.lines[l-1]), "//") || t.blank(l)); l++ {
			inside[l] = true
		}
		if l <= len(t.lines) && strings.TrimSpace(t.lines[l-1]) == "}" {
			inside[l] = true
		}
	}
	return inside
}

// A need is an output line whose number the count since the last
// directive gets wrong, and the original line it must have.
type need struct{ line, orig int }

// needed returns the lines of an n-line output that need a directive.
func needed(n int, anchors map[int]anchor, fixed map[int]bool) []need {
	var needs []need
	cur := 1 // the line number the compiler gives output line l
	for l := 1; l <= n; l++ {
		if a, ok := anchors[l]; ok && a.orig != cur && !fixed[l] {
			needs = append(needs, need{l, a.orig})
			cur = a.orig
		}
		cur++
	}
	return needs
}

// place decides where the directive of each need goes: at[l] are the
// lines to put before line l, prefix[l] a block directive to start it
// with.
func (t outLines) place(lineName string, needs []need, inside map[int]bool) (at map[int][]string, prefix map[int]string) {
	lines, blank, topComment := t.lines, t.blank, t.topComment
	// Place each directive. At the top level (a line that starts at column
	// 1, other than a closing brace or parenthesis) gofmt wants blank lines
	// between declarations, and a directive that touches a doc comment
	// joins it, and gofmt then moves it to the end of the comment; so there
	// the directive goes above the declaration's doc comment, with blank
	// lines around it, and names the line of the blank line after it.
	//
	// A directive must not split the build constraints at the top of the
	// file, which gofmt keeps together (the printer adds a //go:build line
	// above a lone "// +build" one): one needed among them, or the blank
	// lines after them, goes below them.
	constraintEnd := 0 // the last line of the file's build constraints
	for l := 1; l <= len(lines); l++ {
		text := strings.TrimSpace(lines[l-1])
		if constraint.IsGoBuild(text) || constraint.IsPlusBuild(text) {
			constraintEnd = l
		} else if text != "" && !strings.HasPrefix(text, "//") {
			break
		}
	}
	at = make(map[int][]string)
	prefix = make(map[int]string)
	for _, n := range needs {
		l, orig := n.line, n.orig
		if orig < 2 && l > constraintEnd && topComment(l) && !inside[l] {
			// The doc comment of the file's first declaration (its
			// package clause) on the file's first line, below the
			// build constraint the rewrite added: a directive above it
			// would join it (there is no line 0 to name for a blank
			// line between), so a block directive at the start of the
			// declaration it documents names that line instead. The
			// comment's own lines hold no code.
			d := l
			for d <= len(lines) && topComment(d) && !inside[d] {
				d++
			}
			if d <= len(lines) && !blank(d) {
				prefix[d] = fmt.Sprintf("/*line %s:%d:1*/ ", lineName, orig+d-l)
				continue
			}
		}
		if l <= constraintEnd {
			for l <= constraintEnd || blank(l) {
				l, orig = l+1, orig+1
			}
		}
		for orig > 1 && l-1 > constraintEnd && topComment(l-1) && !inside[l-1] {
			l, orig = l-1, orig-1
		}
		text := lines[l-1]
		top := text != "" && text[0] != '\t' && text[0] != ' ' && text[0] != '}' && text[0] != ')' && text[0] != '\n'
		if top && orig < 2 && topComment(l) && !inside[l] {
			// A doc comment on the original's first line (the package's,
			// below an added //go:build line) leaves no blank line above
			// it to name. The directive goes at its end, in the form gofmt
			// gives a doc comment's directives: after a "//" line unless
			// the comment has directives already. The comment's own lines
			// go unnumbered; the compiler reports none of them.
			e, hasDirective := l, false
			for e <= len(lines) && topComment(e) && !inside[e] {
				hasDirective = hasDirective || IsDirective(strings.TrimSpace(lines[e-1]))
				e++
			}
			if e <= len(lines) && !blank(e) {
				if !hasDirective {
					at[e] = append(at[e], "//")
				}
				at[e] = append(at[e], Directive(lineName, orig+e-l))
				continue
			}
		}
		if !top || orig < 2 {
			at[l] = append(at[l], Directive(lineName, orig))
			continue
		}
		if !blank(l - 1) {
			at[l] = append(at[l], "")
		}
		at[l] = append(at[l], Directive(lineName, orig-1), "")
	}
	return at, prefix
}

// write puts the directives into the lines and formats the result, which
// must keep every line where it is.
func (t outLines) write(at map[int][]string, prefix map[int]string) ([]byte, error) {
	var b bytes.Buffer
	for i, l := range t.lines {
		for _, d := range at[i+1] {
			b.WriteString(d + "\n")
		}
		b.WriteString(prefix[i+1] + l)
	}
	res, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("formatting the rewritten file: %w", err)
	}
	if bytes.Count(res, []byte("\n")) != bytes.Count(b.Bytes(), []byte("\n")) {
		return nil, errors.New("formatting the rewritten file moved its lines")
	}
	return res, nil
}

// preorder lists the nodes of f in the order ast.Inspect visits them.
func preorder(f *ast.File) []ast.Node {
	var nodes []ast.Node
	ast.Inspect(f, func(n ast.Node) bool {
		if n != nil {
			if _, ok := n.(*ast.CommentGroup); !ok {
				if _, ok := n.(*ast.Comment); !ok {
					nodes = append(nodes, n)
				}
			}
		}
		return true
	})
	return nodes
}

// IsDirective reports whether the line comment c is a directive, as
// go/printer tells them in a doc comment (which it moves to the comment's
// end): //line, //extern, //export, and //word:word.
func IsDirective(c string) bool {
	after, ok := strings.CutPrefix(c, "//")
	if !ok {
		return false
	}
	if strings.HasPrefix(after, "line ") || strings.HasPrefix(after, "extern ") || strings.HasPrefix(after, "export ") {
		return true
	}
	colon := strings.Index(after, ":")
	if colon <= 0 || colon+1 >= len(after) {
		return false
	}
	for i := 0; i <= colon+1; i++ {
		if b := after[i]; i != colon && !('a' <= b && b <= 'z' || '0' <= b && b <= '9') {
			return false
		}
	}
	return true
}

func splitLines(b []byte) []string {
	var lines []string
	for l := range bytes.Lines(b) {
		lines = append(lines, string(l))
	}
	return lines
}
