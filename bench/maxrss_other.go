//go:build !unix

package main

import "os"

// maxRSS returns 0: there is no rusage to read the peak resident set from.
func maxRSS(*os.ProcessState) int64 { return 0 }
