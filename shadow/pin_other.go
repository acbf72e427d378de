//go:build !linux

package shadow

// pinThread cannot bind a thread to a CPU outside Linux.
func pinThread(want int) int { return -1 }
