//go:build !unix

package perf

import "errors"

const threadCPUSupported = false

type threadClock struct{}

func (*threadClock) read() (uint64, error) {
	return 0, errors.New("no per-thread CPU clock on this platform")
}
