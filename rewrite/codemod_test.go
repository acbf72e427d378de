package rewrite

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
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
	done, err := Undo(dir, func(d string) bool { return d == filepath.Join(dir, "a") })
	if err != nil {
		t.Fatal(err)
	}
	if len(done) != 2 {
		t.Errorf("Undo(a) restored %v, want a.go and zz_spanprof.go", done)
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
	if done, err := Undo(dir, nil); err != nil || len(done) != 0 {
		t.Errorf("Undo with nothing to undo: %v, %v", done, err)
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
