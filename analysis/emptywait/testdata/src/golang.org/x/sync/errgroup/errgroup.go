// Package errgroup is a stub of golang.org/x/sync/errgroup for analysistest:
// the API the analyzers recognise, with trivial bodies.
package errgroup

import "context"

type Group struct{ err error }

func WithContext(ctx context.Context) (*Group, context.Context) { return &Group{}, ctx }

func (g *Group) Wait() error { return g.err }

func (g *Group) Go(f func() error) { g.err = f() }

func (g *Group) TryGo(f func() error) bool { g.err = f(); return true }

func (g *Group) SetLimit(n int) {}
