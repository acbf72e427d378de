package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spanprof/spanprof/rewrite"
)

var cmdRewrite = &command{
	name:  "rewrite",
	usage: "spanprof rewrite [-w | -d | -l] [-undo] PKGS...",
	short: "codemod: instrument the source of packages in place",
	long: `Rewrite instruments the source of PKGS (default .) and their tests, as run and
test do in a temporary overlay, but for keeps. Without a flag it prints the
rewritten files to standard output.

	-w	write the rewritten files (atomically; the tree stays gofmt-clean)
	-d	print a diff instead of writing
	-l	list the files that would change
	-undo	restore the original files (go.mod and go.sum included)

-w keeps the originals in .spanprof/ at the module root, for -undo. It adds
files named zz_spanprof*.go to the packages (the site tables and a TestMain),
copies the spanprof runtime into .spanprof/runtime, and writes a go.work at
the module root that uses the module and the runtime by relative paths (or
adds the runtime to the go.work there): go.mod and go.sum stay as they are,
and the rewritten tree builds with the plain go command on any machine,
with go.work and .spanprof/runtime. Rewriting a package that is rewritten
already changes nothing; -undo PKGS restores those packages (go.work with
the package at the module root), and -undo alone restores everything. A
go.work.sum that the go command wrote in that workspace, where there was
none, goes with go.work.

-undo never destroys a change made after the rewrite. A file still as -w
wrote it gets its original back, byte for byte. In a file changed since,
the changes are carried over to the original, as a three-way merge would,
unless they change a line the rewrite changed: then the file (and the rest
of its package) is left as it is, with one line naming it, and -undo exits
with status 1. It prints how many files it restored. If files were reverted
by other means (git checkout) and edited, a later -w keeps their new
originals, not the old backups.

After -w, "go test ./pkg -spanprofile=FILE" writes the span profile of the
package's tests to FILE (the flag goes after the packages, as Go requires of
test binary flags), and running a rewritten main package with SPANPROF_OUT
or SPANPROF_MODE set writes one (to $SPANPROF_OUT, default spanprof.pb.gz).
Without them rewritten code runs as the original does: no profile, every
spawn a goroutine. Every position stays true: //line directives follow
inserted code.

A package that does not type-check, a read-only file, or a name starting
with _spanprof in the code is refused with an error, and no file changes.

Exit status: 0 on success, 1 when -undo left a changed file as it is, 2 on a
usage error or a refusal.
`,
	run: runRewrite,
}

func runRewrite(c *command, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	write := fs.Bool("w", false, "write the rewritten files")
	diff := fs.Bool("d", false, "print a diff of the changes")
	list := fs.Bool("l", false, "list the files that would change")
	undo := fs.Bool("undo", false, "restore the original files")
	if err := parseFlags(c, fs, args); err != nil {
		return finish(stdout, stderr, err)
	}
	n := 0
	for _, b := range []bool{*write, *diff, *list} {
		if b {
			n++
		}
	}
	if n > 1 {
		return finish(stdout, stderr, usageError(c, "rewrite takes one of -w, -d and -l"))
	}
	wd, err := os.Getwd()
	if err != nil {
		errorf(stderr, "%v", err)
		return exitUsage
	}
	if *undo {
		return runUndo(wd, fs.Args(), *list, stdout, stderr)
	}

	prog, err := rewrite.Load(rewrite.Config{Mode: rewrite.InPlace, Tests: true}, fs.Args())
	if err != nil {
		errorf(stderr, "%v%s", err, leftoverHint(wd))
		return exitUsage
	}
	if err := prog.Inline(); err != nil {
		errorf(stderr, "%v", err)
		return exitUsage
	}
	res, err := prog.Rewrite()
	if err != nil {
		errorf(stderr, "%v", err)
		return exitUsage
	}
	for _, w := range res.Warnings {
		errorf(stderr, "%s", w)
	}
	if err := rewrite.WithRuntime(prog, res); err != nil {
		errorf(stderr, "%v", err)
		return exitUsage
	}
	rel := func(name string) string {
		if r, err := filepath.Rel(wd, name); err == nil && !strings.HasPrefix(r, "..") {
			return r
		}
		return name
	}
	switch {
	case *list:
		for _, f := range res.Files {
			fmt.Fprintln(stdout, rel(f.Path))
		}
	case *diff:
		for _, f := range res.Files {
			old := "/dev/null"
			if f.Old != nil {
				old = rel(f.Path) + ".orig"
			}
			io.WriteString(stdout, rewrite.Diff(old, f.Old, rel(f.Path), f.New))
		}
	case *write:
		if err := rewrite.Write(prog.Module.Dir, res.Files); err != nil {
			errorf(stderr, "%v", err)
			return exitUsage
		}
		if len(res.Files) > 0 && prog.Module.Path != rewrite.SpanprofModule {
			if err := rewrite.WriteRuntime(prog.Module.Dir); err != nil {
				errorf(stderr, "%v", err)
				return exitUsage
			}
		}
		fmt.Fprintf(stderr, "spanprof: rewrote %d files; %s\n", len(res.Files), res.Stats)
	default:
		for _, f := range res.Files {
			stdout.Write(f.New)
		}
	}
	if len(res.Rewritten) > 0 && len(res.Files) == 0 {
		fmt.Fprintf(stderr, "spanprof: nothing to do: %s already rewritten\n", strings.Join(res.Rewritten, ", "))
	}
	return exitOK
}

// runUndo restores what rewrite -w changed in the packages pkgs (all, if
// none) of the module containing wd.
func runUndo(wd string, pkgs []string, list bool, stdout, stderr io.Writer) int {
	root, err := moduleRoot(wd)
	if err != nil {
		errorf(stderr, "%v", err)
		return exitUsage
	}
	var keep func(string) bool
	if len(pkgs) > 0 {
		dirs, err := packageDirs(wd, pkgs)
		if err != nil {
			errorf(stderr, "%v", err)
			return exitUsage
		}
		keep = func(dir string) bool { return dirs[dir] }
	}
	res, err := rewrite.Undo(root, keep)
	rel := func(name string) string {
		if r, err := filepath.Rel(wd, name); err == nil && !strings.HasPrefix(r, "..") {
			return r
		}
		return name
	}
	if list {
		for _, name := range slices.Concat(res.Restored, res.Merged) {
			fmt.Fprintln(stdout, rel(name))
		}
	}
	for _, f := range res.Left {
		errorf(stderr, "%s: %s", rel(f.Path), f.Why)
	}
	if err != nil {
		errorf(stderr, "%v", err)
		return exitUsage
	}
	switch n := len(res.Restored) + len(res.Merged); {
	case n > 0 && len(res.Merged) > 0:
		fmt.Fprintf(stderr, "spanprof: restored %s (%d with your changes carried over)\n", countFiles(n), len(res.Merged))
	case n > 0:
		fmt.Fprintf(stderr, "spanprof: restored %s\n", countFiles(n))
	case len(res.Left) == 0:
		fmt.Fprintln(stderr, "spanprof: nothing to undo")
	}
	if len(res.Left) > 0 {
		fmt.Fprintf(stderr, "spanprof: %s not restored; the originals are in %s\n", countFiles(len(res.Left)), filepath.Join(rel(root), rewrite.BackupDir, "orig"))
		return exitFailed
	}
	return exitOK
}

// countFiles spells a count of files.
func countFiles(n int) string {
	if n == 1 {
		return "1 file"
	}
	return fmt.Sprintf("%d files", n)
}

// leftoverHint explains a load error in a tree that an earlier rewrite -w
// left half reverted (git checkout restores the rewritten files and go.mod
// but leaves the generated ones): "" if the module has no backup.
func leftoverHint(wd string) string {
	root, err := moduleRoot(wd)
	if err != nil {
		return ""
	}
	if _, err := os.Stat(filepath.Join(root, rewrite.BackupDir, "manifest.json")); err != nil {
		return ""
	}
	return fmt.Sprintf(" (%s holds an earlier spanprof rewrite -w: spanprof rewrite -undo first)", rewrite.BackupDir)
}

// moduleRoot returns the root directory of the module containing dir.
func moduleRoot(dir string) (string, error) {
	cmd := exec.Command("go", "env", "GOMOD")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("%s is not in a module", dir)
	}
	return filepath.Dir(gomod), nil
}

// packageDirs returns the directories of the packages that patterns match,
// without loading their code (which may not build while rewritten).
func packageDirs(dir string, patterns []string) (map[string]bool, error) {
	cmd := exec.Command("go", append([]string{"list", "-e", "-find", "-f", "{{.Dir}}"}, patterns...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s: %v: %s", strings.Join(patterns, " "), err, strings.TrimSpace(stderr.String()))
	}
	dirs := make(map[string]bool)
	for l := range strings.Lines(string(out)) {
		if l = strings.TrimSpace(l); l != "" {
			dirs[l] = true
		}
	}
	return dirs, nil
}
