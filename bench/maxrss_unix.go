//go:build unix

package main

import (
	"os"
	"runtime"
	"syscall"
)

// maxRSS returns the peak resident set size of the finished process, in
// bytes: getrusage's ru_maxrss, which Linux and the BSDs count in KiB and
// macOS in bytes.
func maxRSS(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) * 1024
}
