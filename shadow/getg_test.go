package shadow

import "testing"

func TestGetgDistinct(t *testing.T) {
	a := getg()
	c := make(chan uintptr)
	go func() { c <- getg() }()
	b := <-c
	if a == 0 || b == 0 || a == b || getg() != a {
		t.Fatalf("getg: %x %x", a, b)
	}
}
