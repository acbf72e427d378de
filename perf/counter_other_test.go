//go:build !linux

package perf

import (
	"errors"
	"runtime"
	"testing"
)

func TestOpenCounterOutsideLinux(t *testing.T) {
	_, err := Open(Instructions)
	want := "perf: cannot open instructions counter: perf events need Linux, not " + runtime.GOOS + "; use -measure cpu (the default)"
	if err == nil || err.Error() != want {
		t.Fatalf("Open(instructions) error = %v, want %s", err, want)
	}
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Error("error is not errors.ErrUnsupported")
	}
}
