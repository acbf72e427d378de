package rewrite

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// BackupDir is the directory, at the root of a module, where `spanprof
// rewrite -w` keeps the originals of the files it changes, for -undo.
const BackupDir = ".spanprof"

// The manifest lists what rewriting changed in a module.
type manifest struct {
	Files []backup `json:"files"`
}

// A backup is one file that rewriting changed or added: Path relative to the
// module root, slash-separated; Mode its permissions; Created when the
// rewrite added it (undo removes it); Written the SHA-256 of what the
// rewrite wrote, hex-encoded ("" in a manifest of an older spanprof, which
// kept none). The original's bytes are in BackupDir/orig/Path (none if
// Created), what the rewrite wrote in BackupDir/written/Path.
//
// Derived marks go.work.sum where there was none: the go command writes it
// in the workspace of the go.work the rewrite wrote, with the checksums the
// runtime's requirements add to the module's, and undo removes it with
// go.work, whatever it holds.
type backup struct {
	Path    string      `json:"path"`
	Mode    fs.FileMode `json:"mode"`
	Created bool        `json:"created,omitempty"`
	Written string      `json:"written_sha256,omitempty"`
	Derived bool        `json:"derived,omitempty"`
}

func readManifest(root string) (*manifest, error) {
	data, err := os.ReadFile(filepath.Join(root, BackupDir, "manifest.json"))
	if os.IsNotExist(err) {
		return &manifest{}, nil
	}
	if err != nil {
		return nil, err
	}
	var m manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(root, BackupDir, "manifest.json"), err)
	}
	return &m, nil
}

// find returns the manifest's entry for rel, or nil.
func (m *manifest) find(rel string) *backup {
	for i := range m.Files {
		if m.Files[i].Path == rel {
			return &m.Files[i]
		}
	}
	return nil
}

func (m *manifest) write(root string) error {
	data, err := json.MarshalIndent(m, "", "\t")
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(root, BackupDir, "manifest.json"), append(data, '\n'), 0o644)
}

// origPath and writtenPath are where BackupDir keeps the original of the
// file rel and what the rewrite wrote there.
func origPath(root, rel string) string {
	return filepath.Join(root, BackupDir, "orig", filepath.FromSlash(rel))
}

func writtenPath(root, rel string) string {
	return filepath.Join(root, BackupDir, "written", filepath.FromSlash(rel))
}

// hash is the hex SHA-256 of data.
func hash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// isModFile reports whether rel is go.mod, go.sum, go.work or go.work.sum,
// which every rewritten package of the module shares: they go back last,
// with the last package, and never while a package is left as it is.
func isModFile(rel string) bool {
	return rel == "go.mod" || rel == "go.sum" || rel == "go.work" || rel == workSum
}

// workSum is the go.work.sum at the module root (see backup.Derived).
const workSum = "go.work.sum"

// WithRuntime adds what makes the rewritten code build with the plain go
// command: a go.work at the module root that uses the module and the copy
// of the runtime in RuntimeDir (WriteRuntime writes it), by relative paths,
// keeping the user's workspace if there is one. go.mod and go.sum stay as
// they are (see workspace). A module that is spanprof itself needs none.
func WithRuntime(prog *Program, res *Result) error {
	if prog.Module.Path == SpanprofModule || len(res.Files) == 0 {
		return nil
	}
	gomod, err := os.ReadFile(prog.Module.GoMod)
	if err != nil {
		return err
	}
	base, atRoot, err := userWorkspace(prog.Module.Dir)
	if err != nil {
		return err
	}
	work, err := workspace(gomod, ".", "./"+RuntimeDir, base)
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(prog.Module.Dir, "go.work"), err)
	}
	f := &File{Path: filepath.Join(prog.Module.Dir, "go.work"), New: work}
	if atRoot {
		f.Old = base
	}
	if !bytes.Equal(f.Old, f.New) {
		res.Files = append(res.Files, f)
	}
	return nil
}

// Write applies the rewrite to the module at root: every file is written
// atomically (a temporary file renamed over it, with the original's
// permissions), after the originals, and what is written, are kept in
// BackupDir for Undo. It refuses, changing nothing, when a file to change is
// read-only.
//
// A backup is stale when its file is no longer what a rewrite wrote (it was
// reverted with git checkout, say, and edited since). The rewriter only
// rewrites a package that is not rewritten already, so a Go file that it
// rewrites again is an original: its backup is replaced by it. go.mod and
// go.sum, which other rewritten packages may share, get the changes made
// since the rewrite carried over to the original kept for them (merge3),
// and Write refuses, changing nothing, when those do not apply. An entry of
// the manifest whose file is its original again is dropped.
func Write(root string, files []*File) error {
	if len(files) == 0 {
		return nil
	}
	m, err := readManifest(root)
	if err != nil {
		return err
	}
	// Check everything first: read-only files refuse the whole rewrite.
	modes := make([]fs.FileMode, len(files))
	rels := make([]string, len(files))
	var errs []error
	for i, f := range files {
		rel, err := filepath.Rel(root, f.Path)
		if err != nil || strings.HasPrefix(rel, "..") {
			return fmt.Errorf("%s is outside the module at %s", f.Path, root)
		}
		rels[i] = filepath.ToSlash(rel)
		modes[i] = 0o644
		if f.Old == nil {
			continue
		}
		info, err := os.Stat(f.Path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		modes[i] = info.Mode().Perm()
		if modes[i]&0o200 == 0 {
			errs = append(errs, refuse("%s: the file is read-only", f.Path))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}

	// Decide the backup of every file, then bring the rest of the manifest
	// up to date, before anything is written.
	type keep struct {
		b    backup
		orig []byte // the original to keep, unless b.Created or old
		old  bool   // the backup in BackupDir is the original still
	}
	keeps := make([]keep, len(files))
	for i, f := range files {
		k := keep{b: backup{Path: rels[i], Mode: modes[i], Created: f.Old == nil}, orig: f.Old}
		if prev := m.find(rels[i]); prev != nil {
			switch {
			case f.Old != nil && prev.Written != "" && hash(f.Old) == prev.Written:
				// As the earlier rewrite wrote it: its backup holds the
				// true original.
				k.b.Mode, k.b.Created, k.old = prev.Mode, prev.Created, true
			case isModFile(rels[i]) && f.Old != nil:
				orig, created, err := carryOver(root, *prev, f.Old)
				if err != nil {
					return err
				}
				k.b.Created, k.orig = created, orig
			}
		}
		k.b.Written = hash(f.New)
		keeps[i] = k
	}
	inFiles := func(rel string) bool { return slices.Contains(rels, rel) }
	var rest, dropped []backup
	if inFiles("go.work") && m.find(workSum) == nil {
		if _, err := os.Stat(filepath.Join(root, workSum)); os.IsNotExist(err) {
			rest = append(rest, backup{Path: workSum, Mode: 0o644, Created: true, Derived: true})
		}
	}
	for _, b := range m.Files {
		if inFiles(b.Path) {
			continue
		}
		if b.Derived {
			rest = append(rest, b) // absent until a go command writes it
			continue
		}
		if original, err := isOriginal(root, b); err != nil {
			return err
		} else if original {
			dropped = append(dropped, b)
		} else {
			rest = append(rest, b)
		}
	}

	// Keep the originals and what is written.
	for i, f := range files {
		k := keeps[i]
		if !k.old {
			if k.b.Created {
				if err := os.Remove(origPath(root, k.b.Path)); err != nil && !os.IsNotExist(err) {
					return err
				}
			} else if err := writeAtomic(origPath(root, k.b.Path), k.orig, 0o644); err != nil {
				return fmt.Errorf("keeping the original of %s: %w", f.Path, err)
			}
		}
		if err := writeAtomic(writtenPath(root, k.b.Path), f.New, 0o644); err != nil {
			return fmt.Errorf("keeping the rewrite of %s: %w", f.Path, err)
		}
		rest = append(rest, k.b)
	}
	m.Files = rest
	if err := m.write(root); err != nil {
		return err
	}
	for _, b := range dropped {
		removeBackup(root, b)
	}
	for i, f := range files {
		if err := writeAtomic(f.Path, f.New, modes[i]); err != nil {
			// Put back what is written already; the manifest lists those
			// files as stale, which Undo and Write handle.
			var uerrs []error
			for j, g := range files[:i] {
				if g.Old == nil {
					uerrs = append(uerrs, os.Remove(g.Path))
				} else {
					uerrs = append(uerrs, writeAtomic(g.Path, g.Old, modes[j]))
				}
			}
			return errors.Join(fmt.Errorf("writing %s: %w", f.Path, err), errors.Join(uerrs...))
		}
	}
	return nil
}

// carryOver returns the original to keep for go.mod or go.sum, whose
// content cur is not what the earlier rewrite described by b wrote: b's
// original with the changes made since the rewrite carried over, and
// whether that original is no file at all. It refuses when those changes do
// not apply.
func carryOver(root string, b backup, cur []byte) (orig []byte, created bool, err error) {
	name := filepath.Join(root, filepath.FromSlash(b.Path))
	if !b.Created {
		orig, err = os.ReadFile(origPath(root, b.Path))
		if err != nil {
			return nil, false, err
		}
		if reverted(b.Path, cur, orig) {
			return cur, false, nil
		}
	}
	written, err := os.ReadFile(writtenPath(root, b.Path))
	if b.Written == "" || err != nil || hash(written) != b.Written {
		return nil, false, refuse("%s: changed since spanprof rewrite -w, and an older spanprof kept no record of what it wrote; undo that rewrite first (spanprof rewrite -undo)", name)
	}
	merged, ok := merge3(written, orig, cur)
	if !ok {
		return nil, false, refuse("%s: changed since spanprof rewrite -w in a way that does not apply to the original kept in %s; undo that rewrite first (spanprof rewrite -undo)", name, BackupDir)
	}
	return merged, b.Created && len(merged) == 0, nil
}

// isOriginal reports whether the file of b is its original again: the
// file is absent when the rewrite added it, or reverted.
func isOriginal(root string, b backup) (bool, error) {
	cur, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(b.Path)))
	if b.Created || err != nil {
		if os.IsNotExist(err) {
			return b.Created, nil
		}
		return false, err
	}
	if b.Written != "" && hash(cur) == b.Written {
		return false, nil
	}
	orig, err := os.ReadFile(origPath(root, b.Path))
	if err != nil {
		return false, err
	}
	return reverted(b.Path, cur, orig), nil
}

// reverted reports whether cur, the content of the file rel that a rewrite
// changed, is its original again, or one with nothing of the rewrite left:
// reverted by other means (git checkout) and maybe edited since.
func reverted(rel string, cur, orig []byte) bool {
	if bytes.Equal(cur, orig) {
		return true
	}
	mark := rewriteMark(rel)
	return mark != nil && !bytes.Contains(cur, mark) && !bytes.Contains(orig, mark)
}

// removeBackup removes what BackupDir keeps of the file of b.
func removeBackup(root string, b backup) {
	os.Remove(origPath(root, b.Path))
	os.Remove(writtenPath(root, b.Path))
}

// UndoResult says what Undo did, file by file (absolute paths).
type UndoResult struct {
	Restored []string   // as they were before the rewrite, or removed if the rewrite added them
	Merged   []string   // restored with the changes made since the rewrite carried over (or left removed)
	Left     []LeftFile // changed since the rewrite, in a way that does not apply to the original: left as they are
}

// A LeftFile is a file Undo left as it is, and why.
type LeftFile struct {
	Path string
	Why  string // "changed since spanprof rewrite -w; left as it is"
}

// The reasons Undo leaves a file as it is.
const (
	whyChanged  = "changed since spanprof rewrite -w; left as it is"
	whyNoRecord = "no record of what spanprof rewrite -w wrote (an older spanprof kept none); left as it is"
)

// Undo restores the files that rewriting changed in the module at root,
// for the directories for which keep returns true (all, if keep is nil),
// and removes the files it added. It never destroys a change made after
// the rewrite: a file still as the rewrite wrote it gets its original back,
// byte for byte; a file changed since gets the original with those
// changes carried over (merge3: the changes from what the rewrite wrote to
// what is there now, applied to the original), or, when they do not apply,
// is left as it is, listed in Left with why, and stays in the manifest,
// with the other files of its directory (its package must still build). A
// file removed since stays removed; a file the rewrite added and that was
// changed since is left as it is. Files keep their permissions. Once
// nothing else is left, it restores go.mod and go.sum and removes
// BackupDir.
func Undo(root string, keep func(dir string) bool) (*UndoResult, error) {
	res := &UndoResult{}
	m, err := readManifest(root)
	if err != nil {
		return res, err
	}
	if len(m.Files) == 0 {
		return res, nil
	}
	if keep == nil {
		keep = func(string) bool { return true }
	}
	if err := undoFiles(root, m, keep, res); err != nil {
		return res, err
	}
	// go.mod, go.sum and go.work go back last, with the last package.
	rest := slices.DeleteFunc(slices.Clone(m.Files), func(b backup) bool { return isModFile(b.Path) })
	if len(rest) == 0 {
		err := undoFiles(root, m, func(string) bool { return true }, res)
		if err == nil && len(m.Files) == 0 {
			return res, os.RemoveAll(filepath.Join(root, BackupDir))
		}
		if werr := m.write(root); err == nil {
			err = werr
		}
		return res, err
	}
	return res, m.write(root)
}

// undoFiles undoes the manifest's files in the directories keep accepts
// (but not go.mod and go.sum while other files remain), and drops from the
// manifest those it restored, or found restored already. A package stays
// whole: when a Go file of a directory is left as it is, so are the
// directory's other files (the rewritten code and the generated files
// refer to each other).
func undoFiles(root string, m *manifest, keep func(dir string) bool, res *UndoResult) error {
	others := slices.ContainsFunc(m.Files, func(b backup) bool { return !isModFile(b.Path) })
	type step struct {
		b    backup
		plan undoPlan
	}
	var steps []step
	leftDir := make(map[string]string) // directory → the base name of a file left there
	for _, b := range m.Files {
		name := filepath.Join(root, filepath.FromSlash(b.Path))
		if isModFile(b.Path) && others || !keep(filepath.Dir(name)) {
			continue
		}
		p, err := planUndo(root, b)
		if err != nil {
			return fmt.Errorf("restoring %s: %w", name, err)
		}
		if p.why != "" && !isModFile(b.Path) && leftDir[path.Dir(b.Path)] == "" {
			leftDir[path.Dir(b.Path)] = path.Base(b.Path)
		}
		steps = append(steps, step{b, p})
	}
	var errs []error
	done := make(map[string]bool)
	for _, s := range steps {
		name := filepath.Join(root, filepath.FromSlash(s.b.Path))
		if other := leftDir[path.Dir(s.b.Path)]; other != "" && s.plan.why == "" && s.plan.action != undoNone && !isModFile(s.b.Path) {
			s.plan = undoPlan{why: fmt.Sprintf("not restored, since %s in the same directory is left as it is", other)}
		}
		if s.plan.why != "" {
			res.Left = append(res.Left, LeftFile{Path: name, Why: s.plan.why})
			continue
		}
		var err error
		switch s.plan.action {
		case undoRemove:
			err = os.Remove(name)
			if os.IsNotExist(err) {
				err = nil
			}
		case undoRestore, undoMerge:
			err = writeAtomic(name, s.plan.data, s.plan.mode)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("restoring %s: %w", name, err))
			continue
		}
		switch s.plan.action {
		case undoRemove, undoRestore:
			res.Restored = append(res.Restored, name)
		case undoMerge, undoKeepRemoved:
			res.Merged = append(res.Merged, name)
		}
		removeBackup(root, s.b)
		done[s.b.Path] = true
	}
	m.Files = slices.DeleteFunc(m.Files, func(b backup) bool { return done[b.Path] })
	return errors.Join(errs...)
}

// An undoPlan is what undoing the rewrite of one file does: write data
// (with permissions mode), remove the file, nothing (it is its original
// already, or it was removed since the rewrite, which is the change to carry
// over), or leave it as it is, why saying why.
type undoPlan struct {
	action undoAction
	data   []byte
	mode   fs.FileMode
	why    string
}

type undoAction int

const (
	undoNone        undoAction = iota // the file is its original already
	undoRestore                       // write the original
	undoMerge                         // write the original with the changes since the rewrite
	undoRemove                        // remove the file the rewrite added
	undoKeepRemoved                   // leave removed the file removed since the rewrite
)

// planUndo decides how to undo the rewrite of the file of b, as Undo says.
func planUndo(root string, b backup) (undoPlan, error) {
	name := filepath.Join(root, filepath.FromSlash(b.Path))
	cur, err := os.ReadFile(name)
	missing := os.IsNotExist(err)
	if err != nil && !missing {
		return undoPlan{}, err
	}
	if b.Created {
		switch {
		case missing:
			return undoPlan{action: undoNone}, nil
		case b.Derived:
			return undoPlan{action: undoRemove}, nil
		case b.Written == "":
			return undoPlan{why: whyNoRecord}, nil
		case hash(cur) != b.Written:
			return undoPlan{why: whyChanged}, nil
		}
		return undoPlan{action: undoRemove}, nil
	}
	if missing {
		// Removed since: the change carried over is the removal.
		return undoPlan{action: undoKeepRemoved}, nil
	}
	info, err := os.Stat(name)
	if err != nil {
		return undoPlan{}, err
	}
	mode := info.Mode().Perm()
	orig, err := os.ReadFile(origPath(root, b.Path))
	if err != nil {
		return undoPlan{}, err
	}
	switch {
	case b.Written != "" && hash(cur) == b.Written:
		return undoPlan{action: undoRestore, data: orig, mode: mode}, nil
	case reverted(b.Path, cur, orig):
		return undoPlan{action: undoNone}, nil
	}
	written, err := os.ReadFile(writtenPath(root, b.Path))
	if b.Written == "" || err != nil || hash(written) != b.Written {
		return undoPlan{why: whyNoRecord}, nil
	}
	merged, ok := merge3(written, orig, cur)
	if !ok || strings.HasSuffix(b.Path, ".go") && !plausibleGo(orig, cur, merged) {
		return undoPlan{why: whyChanged}, nil
	}
	return undoPlan{action: undoMerge, data: merged, mode: mode}, nil
}

// rewriteMark returns what every file rel that the rewrite changed holds
// and its original does not (unless the original is spanprof's own): the
// prefix of the names it injects in a Go file, the runtime's module in
// go.mod; nil for go.sum.
func rewriteMark(rel string) []byte {
	switch {
	case strings.HasSuffix(rel, ".go"):
		return []byte(namePrefix)
	case rel == "go.mod":
		return []byte(SpanprofModule)
	}
	return nil
}

// plausibleGo checks the merge of a Go file: none of the rewrite's code
// survives in it (the user changed a line the rewrite had changed, and the
// change came over with the rewrite's code), and it parses if the user's
// file does.
func plausibleGo(orig, cur, merged []byte) bool {
	if mark := rewriteMark(".go"); bytes.Contains(merged, mark) && !bytes.Contains(orig, mark) {
		return false
	}
	parses := func(src []byte) bool {
		_, err := parser.ParseFile(token.NewFileSet(), "", src, parser.ParseComments|parser.SkipObjectResolution)
		return err == nil
	}
	return !parses(cur) || parses(merged)
}

// writeAtomic writes data to name through a temporary file in the same
// directory, renamed over name, with permissions mode.
func writeAtomic(name string, data []byte, mode fs.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".spanprof-")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, name)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
