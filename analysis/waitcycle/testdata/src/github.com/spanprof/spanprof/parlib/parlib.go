// Package parlib is a stub of github.com/spanprof/spanprof/parlib for
// analysistest: the API the analyzers recognise, with trivial bodies.
package parlib

type Group struct{ n int }

func (g *Group) Spawn(f func()) { f() }

func (g *Group) Sync() {}

type Task[T any] struct{ v T }

func Spawn[T any](f func() T) *Task[T] { return &Task[T]{v: f()} }

func (t *Task[T]) Wait() T { return t.v }

func Do(fs ...func()) {
	for _, f := range fs {
		f()
	}
}

func For(lo, hi, grain int, body func(i int)) {
	for i := lo; i < hi; i++ {
		body(i)
	}
}

func ForRange(lo, hi, grain int, body func(lo, hi int)) { body(lo, hi) }

func ForEach[T any](s []T, grain int, body func(i int, v *T)) {
	for i := range s {
		body(i, &s[i])
	}
}
