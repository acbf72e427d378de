// Command multifile spreads its sites over several files, so that the
// order of the site table (by file name, then offset) shows in its golden
// files: main.go calls into a.go, b.go and c.go, each of which spawns and
// calls.
package main

import "fmt"

func main() {
	x := sum(20)
	y := tree(10)
	z := pairs(6)
	total := x + y + z
	fmt.Println(x, y, z, total)
}
