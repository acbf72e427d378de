package suite

import (
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	in := `# The suite.
quicksort  -n 50000

  # an indented comment
stencil    -rows 128 -cols 128
fft        TODO
lu         TODO (being ported from Cilk-5)
fib
deepchain  STRESS -n 100
`
	got, err := Parse(strings.NewReader(in), "suite.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := []Example{
		{Name: "quicksort", Args: []string{"-n", "50000"}, Line: 2},
		{Name: "stencil", Args: []string{"-rows", "128", "-cols", "128"}, Line: 5},
		{Name: "fft", Pending: true, Line: 6},
		{Name: "lu", Pending: true, Line: 7},
		{Name: "fib", Args: []string{}, Line: 8},
		{Name: "deepchain", Args: []string{"-n", "100"}, Stress: true, Line: 9},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Parse =\n%+v\nwant\n%+v", got, want)
	}
	var names []string
	for _, e := range Ready(got) {
		names = append(names, e.Name)
	}
	if want := []string{"quicksort", "stencil", "fib", "deepchain"}; !reflect.DeepEqual(names, want) {
		t.Errorf("Ready = %v, want %v", names, want)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"twice", "fib -n 20\nfib -n 21\n", "suite.txt:2: fib is listed twice (first on line 1)"},
		{"path", "../fib -n 20\n", `suite.txt:1: "../fib" is not the name of a directory under examples/`},
		{"flag as name", "-n 20\n", `suite.txt:1: "-n" is not the name of a directory under examples/`},
		{"bare word", "fib 20\n", `suite.txt:1: fib: small input "20" does not start with a flag`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tc.in), "suite.txt")
			if err == nil || err.Error() != tc.want {
				t.Errorf("Parse(%q) error = %v, want %s", tc.in, err, tc.want)
			}
		})
	}
}

// The repository's own list must parse: the driver and the suite test
// both stop at its first error.
func TestRepositorySuite(t *testing.T) {
	examples, err := ParseFile("../../examples/suite.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(Ready(examples)) == 0 {
		t.Error("examples/suite.txt lists no example that is ready")
	}
}
