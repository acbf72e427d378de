package rewrite

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeTree creates files (name → content) under dir with mode 0644.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestWriteUndo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"go.mod": "module m\n", "a/a.go": "package a\n", "b/b.go": "package b\n"})
	if err := os.Chmod(filepath.Join(dir, "a/a.go"), 0o600); err != nil {
		t.Fatal(err)
	}
	edit := func(rel, old, new string) *File {
		f := &File{Path: filepath.Join(dir, rel), New: []byte(new)}
		if old != "" {
			f.Old = []byte(old)
		}
		return f
	}
	files := []*File{
		edit("a/a.go", "package a\n", "package a // rewritten\n"),
		edit("a/zz_spanprof.go", "", "package a // added\n"),
		edit("go.mod", "module m\n", "module m\nrequire x v1\n"),
	}
	if err := Write(dir, files); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dir, "a/a.go")); got != "package a // rewritten\n" {
		t.Errorf("a.go = %q after Write", got)
	}
	if info, _ := os.Stat(filepath.Join(dir, "a/a.go")); info.Mode().Perm() != 0o600 {
		t.Errorf("a.go has mode %v after Write, want 0600", info.Mode().Perm())
	}
	// A second rewrite of b keeps the first backups.
	if err := Write(dir, []*File{edit("b/b.go", "package b\n", "package b // rewritten\n"), edit("go.mod", "module m\nrequire x v1\n", "module m\nrequire x v2\n")}); err != nil {
		t.Fatal(err)
	}

	// Undo of package a alone leaves go.mod, still needed by b.
	res, err := Undo(dir, func(d string) bool { return d == filepath.Join(dir, "a") })
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Restored) != 2 || len(res.Merged) != 0 || len(res.Left) != 0 {
		t.Errorf("Undo(a) = %+v, want a.go and zz_spanprof.go restored", res)
	}
	if got := readFile(t, filepath.Join(dir, "a/a.go")); got != "package a\n" {
		t.Errorf("a.go = %q after Undo", got)
	}
	if info, _ := os.Stat(filepath.Join(dir, "a/a.go")); info.Mode().Perm() != 0o600 {
		t.Errorf("a.go has mode %v after Undo, want 0600", info.Mode().Perm())
	}
	if _, err := os.Stat(filepath.Join(dir, "a/zz_spanprof.go")); !os.IsNotExist(err) {
		t.Errorf("zz_spanprof.go still exists after Undo: %v", err)
	}
	if got := readFile(t, filepath.Join(dir, "go.mod")); got != "module m\nrequire x v2\n" {
		t.Errorf("go.mod = %q after Undo(a); want it left for b", got)
	}
	// Undo of the rest restores go.mod as it was before the first rewrite.
	if _, err := Undo(dir, nil); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dir, "go.mod")); got != "module m\n" {
		t.Errorf("go.mod = %q after Undo", got)
	}
	if got := readFile(t, filepath.Join(dir, "b/b.go")); got != "package b\n" {
		t.Errorf("b.go = %q after Undo", got)
	}
	if _, err := os.Stat(filepath.Join(dir, BackupDir)); !os.IsNotExist(err) {
		t.Errorf("%s still exists after the last Undo", BackupDir)
	}
	if res, err := Undo(dir, nil); err != nil || len(res.Restored)+len(res.Merged)+len(res.Left) != 0 {
		t.Errorf("Undo with nothing to undo: %+v, %v", res, err)
	}
}

func TestWriteRefusesReadOnly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.go": "package a\n", "b.go": "package a\n"})
	if err := os.Chmod(filepath.Join(dir, "b.go"), 0o444); err != nil {
		t.Fatal(err)
	}
	err := Write(dir, []*File{
		{Path: filepath.Join(dir, "a.go"), Old: []byte("package a\n"), New: []byte("package a // x\n")},
		{Path: filepath.Join(dir, "b.go"), Old: []byte("package a\n"), New: []byte("package a // y\n")},
	})
	var r *Refusal
	if !errors.As(err, &r) {
		t.Fatalf("Write with a read-only file: %v, want a refusal", err)
	}
	if got := readFile(t, filepath.Join(dir, "a.go")); got != "package a\n" {
		t.Errorf("a.go changed to %q although the rewrite was refused", got)
	}
	if _, err := os.Stat(filepath.Join(dir, BackupDir)); !os.IsNotExist(err) {
		t.Errorf("a refused rewrite left %s", BackupDir)
	}
}

func TestWriteAtomicLeavesNoTemporary(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	name := filepath.Join(dir, "f.go")
	if err := writeAtomic(name, []byte("x"), 0o640); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || !bytes.Equal([]byte(readFile(t, name)), []byte("x")) {
		t.Errorf("directory after writeAtomic: %v", entries)
	}
}

// undoSrc is a program to rewrite for the undo tests: a constant on a line
// the rewrite does not change, and a call it instruments.
const undoSrc = `package main

import "sync"

const n = 10

func fib(k int) int {
	if k < 2 {
		return k
	}
	return fib(k-1) + fib(k-2)
}

func main() {
	var wg sync.WaitGroup
	var a, b int
	wg.Add(1)
	go func() {
		defer wg.Done()
		a = fib(n)
	}()
	b = fib(n - 1)
	wg.Wait()
	println(a + b)
}
`

// rewriteUndoSrc writes undoSrc as main.go of dir (mode 0640), rewrites it
// with Write and returns the rewritten main.go.
func rewriteUndoSrc(t *testing.T, dir string) string {
	t.Helper()
	res, ok := rewriteSource(t, dir, []byte(undoSrc))
	if !ok {
		t.Fatal("undoSrc does not rewrite")
	}
	if err := os.Chmod(filepath.Join(dir, "main.go"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := Write(dir, res.Files); err != nil {
		t.Fatal(err)
	}
	rewritten := readFile(t, filepath.Join(dir, "main.go"))
	if !strings.Contains(rewritten, "_spanprof_shadow.Go(") || !strings.Contains(rewritten, "const n = 10\n") {
		t.Fatalf("unexpected rewrite:\n%s", rewritten)
	}
	return rewritten
}

func writeString(t *testing.T, name, content string) {
	t.Helper()
	info, err := os.Stat(name)
	mode := fs.FileMode(0o644)
	if err == nil {
		mode = info.Mode().Perm()
	}
	if err := os.WriteFile(name, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

// TestUndoCarriesOverEdits edits a rewritten file on a line the rewrite did
// not change: Undo restores the original with the edit, and says so.
func TestUndoCarriesOverEdits(t *testing.T) {
	needGo(t)
	t.Parallel()
	dir := t.TempDir()
	main := filepath.Join(dir, "main.go")
	rewritten := rewriteUndoSrc(t, dir)
	writeString(t, main, strings.Replace(rewritten, "const n = 10\n", "const n = 12\n", 1))

	res, err := Undo(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(undoSrc, "const n = 10\n", "const n = 12\n", 1); readFile(t, main) != want {
		t.Errorf("main.go after Undo:\n%s\nwant the original with the edit:\n%s", readFile(t, main), want)
	}
	if !slices.Equal(res.Merged, []string{main}) || !slices.Equal(res.Restored, []string{filepath.Join(dir, genFile)}) || len(res.Left) != 0 {
		t.Errorf("Undo = %+v; want main.go merged, %s restored (removed)", res, genFile)
	}
	if info, _ := os.Stat(main); info.Mode().Perm() != 0o640 {
		t.Errorf("main.go has mode %v after Undo, want 0640", info.Mode().Perm())
	}
	if _, err := os.Stat(filepath.Join(dir, BackupDir)); !os.IsNotExist(err) {
		t.Errorf("%s is left after a complete Undo: %v", BackupDir, err)
	}
}

// TestUndoLeavesConflictingEdits edits a line that the rewrite changed:
// Undo cannot carry that over, so it leaves the file, and the generated
// file it needs, as they are, says why, and keeps the backup; once the
// edit is undone by hand, Undo restores everything.
func TestUndoLeavesConflictingEdits(t *testing.T) {
	needGo(t)
	t.Parallel()
	dir := t.TempDir()
	main := filepath.Join(dir, "main.go")
	gen := filepath.Join(dir, genFile)
	rewritten := rewriteUndoSrc(t, dir)
	genContent := readFile(t, gen)
	i := strings.Index(rewritten, "fib(n-1)")
	if i < 0 || !strings.Contains(rewritten[strings.LastIndex(rewritten[:i], "\n"):i], "_spanprof_shadow.Leave") {
		t.Fatalf("fib(n-1) is not on an instrumented line:\n%s", rewritten)
	}
	edited := rewritten[:i] + "fib(n-2)" + rewritten[i+len("fib(n-1)"):]
	writeString(t, main, edited)

	res, err := Undo(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []LeftFile{
		{main, whyChanged},
		{gen, "not restored, since main.go in the same directory is left as it is"},
	}
	if !slices.Equal(res.Left, want) || len(res.Restored)+len(res.Merged) != 0 {
		t.Errorf("Undo = %+v; want\n%+v left", res, want)
	}
	if readFile(t, main) != edited || readFile(t, gen) != genContent {
		t.Errorf("Undo changed the files it left")
	}
	// Undone by hand, the file is as the rewrite wrote it: Undo restores.
	writeString(t, main, rewritten)
	res, err = Undo(dir, nil)
	if err != nil || len(res.Left) != 0 || len(res.Restored) != 2 {
		t.Fatalf("Undo after the edit is undone: %+v, %v", res, err)
	}
	if readFile(t, main) != undoSrc {
		t.Errorf("main.go after Undo:\n%s", readFile(t, main))
	}
}

// TestUndoEditedFiles covers the other changes Undo meets: a generated
// file edited, a rewritten file removed, or reverted by hand.
func TestUndoEditedFiles(t *testing.T) {
	needGo(t)
	t.Parallel()
	t.Run("generated file edited", func(t *testing.T) {
		dir := t.TempDir()
		rewriteUndoSrc(t, dir)
		gen := filepath.Join(dir, genFile)
		writeString(t, gen, readFile(t, gen)+"// mine\n")
		res, err := Undo(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Left) != 2 || res.Left[0].Why != "not restored, since zz_spanprof.go in the same directory is left as it is" || res.Left[1] != (LeftFile{gen, whyChanged}) {
			t.Errorf("Undo = %+v; want main.go and %s left", res, genFile)
		}
		if !strings.HasSuffix(readFile(t, gen), "// mine\n") {
			t.Errorf("the edit of %s is lost", genFile)
		}
	})
	t.Run("removed", func(t *testing.T) {
		dir := t.TempDir()
		rewriteUndoSrc(t, dir)
		main := filepath.Join(dir, "main.go")
		if err := os.Remove(main); err != nil {
			t.Fatal(err)
		}
		res, err := Undo(dir, nil)
		if err != nil || !slices.Equal(res.Merged, []string{main}) || len(res.Left) != 0 {
			t.Fatalf("Undo = %+v, %v; want main.go's removal carried over", res, err)
		}
		if _, err := os.Stat(main); !os.IsNotExist(err) {
			t.Errorf("Undo brought back main.go, removed since the rewrite: %v", err)
		}
	})
	t.Run("reverted by hand", func(t *testing.T) {
		dir := t.TempDir()
		rewriteUndoSrc(t, dir)
		main := filepath.Join(dir, "main.go")
		writeString(t, main, undoSrc)
		res, err := Undo(dir, nil)
		if err != nil || len(res.Merged)+len(res.Left) != 0 || len(res.Restored) != 1 {
			t.Fatalf("Undo = %+v, %v; want only %s removed", res, err, genFile)
		}
		if readFile(t, main) != undoSrc {
			t.Errorf("main.go changed")
		}
	})
	t.Run("reverted by hand and edited", func(t *testing.T) {
		dir := t.TempDir()
		rewriteUndoSrc(t, dir)
		main := filepath.Join(dir, "main.go")
		// A line next to one the rewrite changed: no merge could carry
		// this over, but nothing of the rewrite is left to undo.
		edited := strings.Replace(undoSrc, "\twg.Wait()\n", "\twg.Wait() // joined\n", 1)
		writeString(t, main, edited)
		res, err := Undo(dir, nil)
		if err != nil || len(res.Merged)+len(res.Left) != 0 || len(res.Restored) != 1 {
			t.Fatalf("Undo = %+v, %v; want only %s removed", res, err, genFile)
		}
		if readFile(t, main) != edited {
			t.Errorf("main.go changed")
		}
	})
	t.Run("older manifest", func(t *testing.T) {
		dir := t.TempDir()
		rewritten := rewriteUndoSrc(t, dir)
		// A manifest without hashes, as spanprof wrote before it kept them.
		m, err := readManifest(dir)
		if err != nil {
			t.Fatal(err)
		}
		for i := range m.Files {
			m.Files[i].Written = ""
		}
		if err := m.write(dir); err != nil {
			t.Fatal(err)
		}
		res, err := Undo(dir, nil)
		if err != nil || len(res.Left) != 2 || res.Left[0].Why != whyNoRecord {
			t.Fatalf("Undo = %+v, %v; want both files left, with no record", res, err)
		}
		if readFile(t, filepath.Join(dir, "main.go")) != rewritten {
			t.Errorf("main.go changed")
		}
	})
}

// TestWriteStaleBackup reverts a rewritten tree without undo (git checkout
// and clean, say, with .spanprof/ ignored), edits a file and rewrites again:
// the backup is of the edited file, not the stale original, so Undo gives
// back the edit.
func TestWriteStaleBackup(t *testing.T) {
	needGo(t)
	t.Parallel()
	dir := t.TempDir()
	main := filepath.Join(dir, "main.go")
	rewriteUndoSrc(t, dir)
	// Revert by hand, and edit.
	if err := os.Remove(filepath.Join(dir, genFile)); err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(undoSrc, "const n = 10\n", "const n = 11\n", 1)
	writeString(t, main, edited)
	res, ok := rewriteSource(t, dir, []byte(edited))
	if !ok {
		t.Fatal("the edit does not rewrite")
	}
	if err := Write(dir, res.Files); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(readFile(t, main), "const n = 11\n") {
		t.Fatal("the second rewrite lost the edit")
	}
	if _, err := Undo(dir, nil); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, main); got != edited {
		t.Errorf("main.go after Undo:\n%s\nwant the edited file:\n%s", got, edited)
	}
}

// TestWriteStaleGoMod edits go.mod after a rewrite, then rewrites another
// package, which changes go.mod again: the edit is carried over to go.mod's
// original, which Undo restores; an edit that does not apply refuses the
// rewrite, changing nothing.
func TestWriteStaleGoMod(t *testing.T) {
	t.Parallel()
	const gomod = "module m\n\ngo 1.22\n\nrequire (\n\tx v1\n)\n"
	rewritten := strings.Replace(gomod, "\tx v1\n", "\tx v1\n\tgithub.com/spanprof/spanprof v0\n", 1)
	file := func(dir, rel, old, new string) *File {
		f := &File{Path: filepath.Join(dir, rel), New: []byte(new)}
		if old != "" {
			f.Old = []byte(old)
		}
		return f
	}
	t.Run("apart", func(t *testing.T) {
		dir := t.TempDir()
		writeTree(t, dir, map[string]string{"go.mod": gomod, "a/a.go": "package a\n", "b/b.go": "package b\n"})
		if err := Write(dir, []*File{file(dir, "a/a.go", "package a\n", "package a // rewritten\n"), file(dir, "go.mod", gomod, rewritten)}); err != nil {
			t.Fatal(err)
		}
		// The user renames the module; the second rewrite changes the
		// requirement.
		edited := strings.Replace(rewritten, "module m\n", "module m2\n", 1)
		writeString(t, filepath.Join(dir, "go.mod"), edited)
		if err := Write(dir, []*File{file(dir, "b/b.go", "package b\n", "package b // rewritten\n"), file(dir, "go.mod", edited, strings.Replace(edited, "spanprof/spanprof v0", "spanprof/spanprof v1", 1))}); err != nil {
			t.Fatal(err)
		}
		res, err := Undo(dir, nil)
		if err != nil || len(res.Left) != 0 || len(res.Restored) != 3 {
			t.Fatalf("Undo = %+v, %v", res, err)
		}
		if got, want := readFile(t, filepath.Join(dir, "go.mod")), strings.Replace(gomod, "module m\n", "module m2\n", 1); got != want {
			t.Errorf("go.mod after Undo:\n%s\nwant\n%s", got, want)
		}
	})
	t.Run("reverted and edited", func(t *testing.T) {
		dir := t.TempDir()
		writeTree(t, dir, map[string]string{"go.mod": gomod, "a/a.go": "package a\n", "b/b.go": "package b\n"})
		if err := Write(dir, []*File{file(dir, "a/a.go", "package a\n", "package a // rewritten\n"), file(dir, "go.mod", gomod, rewritten)}); err != nil {
			t.Fatal(err)
		}
		// go.mod reverted (git checkout) and given a requirement next to
		// where the rewrite put its own.
		edited := strings.Replace(gomod, "\tx v1\n", "\tx v1\n\ty v2\n", 1)
		writeString(t, filepath.Join(dir, "go.mod"), edited)
		again := strings.Replace(edited, "\ty v2\n", "\ty v2\n\tgithub.com/spanprof/spanprof v0\n", 1)
		if err := Write(dir, []*File{file(dir, "b/b.go", "package b\n", "package b // rewritten\n"), file(dir, "go.mod", edited, again)}); err != nil {
			t.Fatal(err)
		}
		if _, err := Undo(dir, nil); err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, filepath.Join(dir, "go.mod")); got != edited {
			t.Errorf("go.mod after Undo:\n%s\nwant the edited one:\n%s", got, edited)
		}
	})
	t.Run("conflict", func(t *testing.T) {
		dir := t.TempDir()
		writeTree(t, dir, map[string]string{"go.mod": gomod, "a/a.go": "package a\n", "b/b.go": "package b\n"})
		if err := Write(dir, []*File{file(dir, "a/a.go", "package a\n", "package a // rewritten\n"), file(dir, "go.mod", gomod, rewritten)}); err != nil {
			t.Fatal(err)
		}
		edited := strings.Replace(rewritten, "spanprof/spanprof v0\n", "spanprof/spanprof v0 // mine\n", 1)
		writeString(t, filepath.Join(dir, "go.mod"), edited)
		manifest := readFile(t, filepath.Join(dir, BackupDir, "manifest.json"))
		err := Write(dir, []*File{file(dir, "b/b.go", "package b\n", "package b // rewritten\n"), file(dir, "go.mod", edited, edited+"// more\n")})
		var r *Refusal
		if !errors.As(err, &r) || !strings.Contains(err.Error(), "go.mod: changed since spanprof rewrite -w") {
			t.Fatalf("Write with go.mod changed where the rewrite changed it: %v, want a refusal", err)
		}
		if readFile(t, filepath.Join(dir, "b/b.go")) != "package b\n" || readFile(t, filepath.Join(dir, "go.mod")) != edited || readFile(t, filepath.Join(dir, BackupDir, "manifest.json")) != manifest {
			t.Error("a refused Write changed files")
		}
	})
}

// TestWriteDropsRestoredEntries checks that a file reverted by hand, which
// a later rewrite does not touch, leaves the manifest.
func TestWriteDropsRestoredEntries(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a/a.go": "package a\n", "b/b.go": "package b\n"})
	if err := Write(dir, []*File{{Path: filepath.Join(dir, "a/a.go"), Old: []byte("package a\n"), New: []byte("package a // x\n")}}); err != nil {
		t.Fatal(err)
	}
	writeString(t, filepath.Join(dir, "a/a.go"), "package a\n")
	if err := Write(dir, []*File{{Path: filepath.Join(dir, "b/b.go"), Old: []byte("package b\n"), New: []byte("package b // x\n")}}); err != nil {
		t.Fatal(err)
	}
	m, err := readManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Files) != 1 || m.Files[0].Path != "b/b.go" {
		t.Errorf("manifest lists %+v, want only b/b.go", m.Files)
	}
	if _, err := os.Stat(origPath(dir, "a/a.go")); !os.IsNotExist(err) {
		t.Errorf("the backup of a/a.go is kept: %v", err)
	}
}

// TestUndoRemovesTheGoWorkSum: the go command writes go.work.sum in the
// workspace of the go.work that -w wrote (conc's tests added testify's
// go.mod checksum, which the runtime's requirements need), and -undo left
// it behind: the tree was not the original. It goes with go.work, whatever
// the go command wrote in it, and not before the last package; a
// go.work.sum that was there before the rewrite stays as it is.
func TestUndoRemovesTheGoWorkSum(t *testing.T) {
	t.Parallel()
	for _, had := range []bool{false, true} {
		dir := t.TempDir()
		tree := map[string]string{"go.mod": "module m\n", "a/a.go": "package a\n", "b/b.go": "package b\n"}
		if had {
			tree["go.work.sum"] = "mine\n"
		}
		writeTree(t, dir, tree)
		files := []*File{
			{Path: filepath.Join(dir, "a/a.go"), Old: []byte("package a\n"), New: []byte("package a // rewritten\n")},
			{Path: filepath.Join(dir, "b/b.go"), Old: []byte("package b\n"), New: []byte("package b // rewritten\n")},
			{Path: filepath.Join(dir, "go.work"), New: []byte("go 1.26\n\nuse .\n")},
		}
		if err := Write(dir, files); err != nil {
			t.Fatal(err)
		}
		sum := filepath.Join(dir, "go.work.sum")
		writeString(t, sum, "example.com/x v1.0.0/go.mod h1:abc=\n") // as the go command does
		if _, err := Undo(dir, func(d string) bool { return d == filepath.Join(dir, "a") }); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(sum); err != nil {
			t.Errorf("had %v: go.work.sum removed while package b is still rewritten", had)
		}
		res, err := Undo(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = os.Stat(sum)
		switch {
		case !had && err == nil:
			t.Errorf("go.work.sum, written by the go command in the rewrite's workspace, is left after -undo (restored %v)", res.Restored)
		case had && err != nil:
			t.Errorf("the go.work.sum that was there before the rewrite is gone after -undo")
		}
		if _, err := os.Stat(filepath.Join(dir, BackupDir)); err == nil {
			t.Errorf("had %v: %s is left after -undo", had, BackupDir)
		}
	}
}
