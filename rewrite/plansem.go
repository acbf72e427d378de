package rewrite

import (
	"go/token"
	"path/filepath"
	"strconv"

	"github.com/dave/dst"
	"github.com/dave/dst/dstutil"

	"github.com/spanprof/spanprof/analysis/forkjoin"
	"github.com/spanprof/spanprof/spanprofile"
)

// Limits on a spawn site's children, and where its spawns sit.
//
// The runtime models errgroup's SetLimit and the buffered-channel
// semaphore (analysis/forkjoin.Semaphore) in serial mode, as list
// scheduling over the limit's slots (shadow/limit.go, emit_sem.go). A
// semaphore's send becomes SemAcquire(site, sem, v), with the site of the
// spawn whose children take the slots, and its receive SemRelease(sem).
// The site table names, for each spawn, the limit the analyzer sees
// (LimitKind, LimitAt) and how loops enclose it (Loop), so that the report
// can say what bounds the parallelism and give advice that fits the code.

// A siteRow is a row of one of the unit's site tables.
type siteRow struct {
	table table
	i     int
}

// A spawnRow is a planned spawn's row and site expression.
type spawnRow struct {
	row  siteRow
	site dst.Expr
}

// noteSpawn records the row of spawn t, at site, with what the analyzer
// sees around it: its loops, and the errgroup limit on its group.
func (pl *planner) noteSpawn(fr *fileRewriter, s, t *forkjoin.Spawn, site dst.Expr) {
	rows := &pl.tables[fr.table]
	r := &(*rows)[len(*rows)-1]
	switch {
	case s.Kind == forkjoin.ParlibFor:
		r.Loop = spanprofile.LoopParlib
	case s.Loops == 0:
		r.Loop = spanprofile.LoopNone
	case s.Loops == 1:
		r.Loop = spanprofile.LoopFlat
	default:
		r.Loop = spanprofile.LoopNested
	}
	if s.Kind == forkjoin.ErrgroupGo && s.Join != nil {
		for _, l := range pl.res.Limits {
			if l.Join != nil && l.Join.Key == s.Join.Key {
				r.LimitKind, r.LimitAt = "errgroup SetLimit", pl.relLine(l.Pos)
				break
			}
		}
	}
	if pl.spawnRows == nil {
		pl.spawnRows = make(map[*forkjoin.Spawn]spawnRow)
	}
	pl.spawnRows[t] = spawnRow{siteRow{fr.table, len(*rows) - 1}, site}
}

// planSemaphores rewrites the send and the receive of each semaphore
// around a spawn that is planned.
func (pl *planner) planSemaphores() {
	for _, sem := range pl.res.Semaphores {
		sr, ok := pl.spawnRows[sem.Spawn]
		if !ok || pl.fileOf(sem.Acquire.Pos()) == nil || pl.fileOf(sem.Release.Pos()) == nil {
			continue
		}
		r := &pl.tables[sr.row.table][sr.row.i]
		r.LimitKind, r.LimitAt = "semaphore", pl.relLine(sem.Acquire.Pos())
		pl.edits[sem.Acquire] = semAcquire{site: dst.Clone(sr.site).(dst.Expr)}
		pl.edits[sem.Release] = semRelease{}
		pl.stats.Semaphores++
	}
}

// relLine is p as file:line relative to the module root, as site tables
// name files.
func (pl *planner) relLine(p token.Pos) string {
	q := pl.fset.PositionFor(p, false)
	rel, err := filepath.Rel(pl.prog.Module.Dir, q.Filename)
	if err != nil {
		rel = q.Filename
	}
	return filepath.ToSlash(rel) + ":" + strconv.Itoa(q.Line)
}

// A semAcquire replaces a semaphore's send, sem <- v, with
// SemAcquire(site, sem, v).
type semAcquire struct{ site dst.Expr }

func (e semAcquire) apply(c *dstutil.Cursor) dst.Node {
	send := c.Node().(*dst.SendStmt)
	return replaceStmt(c, send, &dst.ExprStmt{X: rtCall(rtSemAcquire, e.site, send.Chan, send.Value)})
}

// A semRelease replaces a semaphore's receive, <-sem, with
// SemRelease(sem).
type semRelease struct{}

func (semRelease) apply(c *dstutil.Cursor) dst.Node {
	n := rtCall(rtSemRelease, c.Node().(*dst.UnaryExpr).X)
	replaceExpr(c, n)
	return n
}
