//go:build !linux

package perf

func pinToOneCPU() bool { return false }
