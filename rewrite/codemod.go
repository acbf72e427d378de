package rewrite

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
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
// rewrite added it (undo removes it). The original's bytes are in
// BackupDir/orig/Path.
type backup struct {
	Path    string      `json:"path"`
	Mode    fs.FileMode `json:"mode"`
	Created bool        `json:"created,omitempty"`
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

func (m *manifest) has(rel string) bool {
	return slices.ContainsFunc(m.Files, func(b backup) bool { return b.Path == rel })
}

func (m *manifest) write(root string) error {
	data, err := json.MarshalIndent(m, "", "\t")
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(root, BackupDir, "manifest.json"), append(data, '\n'), 0o644)
}

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
// permissions), after the originals are kept in BackupDir for Undo. It
// refuses, changing nothing, when a file to change is read-only.
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
	var errs []error
	for i, f := range files {
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
	// Keep the originals.
	for i, f := range files {
		rel, err := filepath.Rel(root, f.Path)
		if err != nil || strings.HasPrefix(rel, "..") {
			return fmt.Errorf("%s is outside the module at %s", f.Path, root)
		}
		rel = filepath.ToSlash(rel)
		if m.has(rel) {
			continue // rewritten before: the backup holds the true original
		}
		b := backup{Path: rel, Mode: modes[i], Created: f.Old == nil}
		if !b.Created {
			if err := writeAtomic(filepath.Join(root, BackupDir, "orig", filepath.FromSlash(rel)), f.Old, 0o644); err != nil {
				return fmt.Errorf("keeping the original of %s: %w", f.Path, err)
			}
		}
		m.Files = append(m.Files, b)
	}
	if err := m.write(root); err != nil {
		return err
	}
	for i, f := range files {
		if err := writeAtomic(f.Path, f.New, modes[i]); err != nil {
			// Put back what is written already.
			_, uerr := undoFiles(root, m, func(string) bool { return true }, files[:i])
			return errors.Join(fmt.Errorf("writing %s: %w", f.Path, err), uerr)
		}
	}
	return nil
}

// Undo restores the files that rewriting changed in the module at root,
// byte for byte and with their permissions, for the directories for which
// keep returns true (all, if keep is nil), and removes the files it added.
// Once nothing else is left, it restores go.mod and go.sum and removes
// BackupDir. It returns the files it restored or removed.
func Undo(root string, keep func(dir string) bool) ([]string, error) {
	m, err := readManifest(root)
	if err != nil {
		return nil, err
	}
	if len(m.Files) == 0 {
		return nil, nil
	}
	if keep == nil {
		keep = func(string) bool { return true }
	}
	done, err := undoFiles(root, m, keep, nil)
	if err != nil {
		return done, err
	}
	// go.mod and go.sum go back last, with the last package.
	rest := slices.DeleteFunc(slices.Clone(m.Files), func(b backup) bool { return b.Path == "go.mod" || b.Path == "go.sum" })
	if len(rest) == 0 {
		more, err := undoFiles(root, m, func(string) bool { return true }, nil)
		done = append(done, more...)
		if err != nil {
			return done, err
		}
		return done, os.RemoveAll(filepath.Join(root, BackupDir))
	}
	return done, m.write(root)
}

// undoFiles restores the manifest's files in the directories keep accepts
// (but not go.mod and go.sum while other files remain), or only those
// among only when it is not nil, and drops them from the manifest.
func undoFiles(root string, m *manifest, keep func(dir string) bool, only []*File) ([]string, error) {
	others := slices.ContainsFunc(m.Files, func(b backup) bool { return b.Path != "go.mod" && b.Path != "go.sum" })
	var done []string
	var errs []error
	var left []backup
	for _, b := range m.Files {
		name := filepath.Join(root, filepath.FromSlash(b.Path))
		switch {
		case only != nil && !slices.ContainsFunc(only, func(f *File) bool { return f.Path == name }):
			left = append(left, b)
			continue
		case only == nil && (b.Path == "go.mod" || b.Path == "go.sum") && others:
			left = append(left, b)
			continue
		case only == nil && !keep(filepath.Dir(name)):
			left = append(left, b)
			continue
		}
		var err error
		if b.Created {
			err = os.Remove(name)
			if os.IsNotExist(err) {
				err = nil
			}
		} else {
			var data []byte
			data, err = os.ReadFile(filepath.Join(root, BackupDir, "orig", filepath.FromSlash(b.Path)))
			if err == nil {
				err = writeAtomic(name, data, b.Mode)
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("restoring %s: %w", name, err))
			left = append(left, b)
			continue
		}
		if !b.Created {
			os.Remove(filepath.Join(root, BackupDir, "orig", filepath.FromSlash(b.Path)))
		}
		done = append(done, name)
	}
	m.Files = left
	return done, errors.Join(errs...)
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
