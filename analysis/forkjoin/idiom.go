package forkjoin

import (
	"go/ast"
	"go/types"
	"strings"

	"golang.org/x/tools/go/types/typeutil"
)

// Import paths of the packages whose idioms the analyzer knows.
const (
	syncPath     = "sync"
	errgroupPath = "golang.org/x/sync/errgroup"
	// ParlibPath is the import path of parlib, whose functions and methods
	// the analyzer recognises by it and their names.
	ParlibPath = "github.com/spanprof/spanprof/parlib"
)

// An op is what a call does in the fork/join model.
type op int

const (
	opNone       op = iota
	opAdd           // (*sync.WaitGroup).Add
	opDone          // (*sync.WaitGroup).Done
	opWait          // (*sync.WaitGroup).Wait
	opGo            // (*sync.WaitGroup).Go
	opErrGo         // (*errgroup.Group).Go
	opErrTryGo      // (*errgroup.Group).TryGo
	opErrWait       // (*errgroup.Group).Wait
	opErrLimit      // (*errgroup.Group).SetLimit
	opGroupSpawn    // (*parlib.Group).Spawn
	opGroupSync     // (*parlib.Group).Sync
	opTaskWait      // (*parlib.Task).Wait
	opSpawn         // parlib.Spawn
	opDo            // parlib.Do
	opFor           // parlib.For, ForRange, ForEach
	opCondWait      // (*sync.Cond).Wait
	opLock          // Lock or RLock of sync.Mutex, RWMutex, Locker
	opGosched       // runtime.Gosched
	opGoexit        // runtime.Goexit
)

// An idiom is a classified call: its op, the receiver expression of a method
// (also for a method expression, whose receiver is the first argument) and
// the remaining arguments.
type idiom struct {
	op   op
	fn   *types.Func // the callee, generic origin; nil for calls of function values
	recv ast.Expr
	args []ast.Expr
}

// classify says what call does.
func classify(info *types.Info, call *ast.CallExpr) idiom {
	fn, _ := typeutil.Callee(info, call).(*types.Func)
	id := idiom{args: call.Args}
	if fn == nil {
		return id
	}
	fn = fn.Origin()
	id.fn = fn
	if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok {
		if s := info.Selections[sel]; s != nil {
			switch s.Kind() {
			case types.MethodVal:
				id.recv = sel.X
			case types.MethodExpr:
				if len(call.Args) > 0 {
					id.recv, id.args = call.Args[0], call.Args[1:]
				}
			}
		}
	}
	if fn.Pkg() == nil {
		return id
	}
	path, name := fn.Pkg().Path(), fn.Name()
	recvType := ""
	if r := fn.Signature().Recv(); r != nil {
		if n, ok := deref(r.Type()).(*types.Named); ok {
			recvType = n.Obj().Name()
		}
	}
	switch {
	case path == syncPath && recvType == "WaitGroup":
		id.op = map[string]op{"Add": opAdd, "Done": opDone, "Wait": opWait, "Go": opGo}[name]
	case path == syncPath && recvType == "Cond" && name == "Wait":
		id.op = opCondWait
	case path == syncPath && (recvType == "Mutex" || recvType == "RWMutex" || recvType == "Locker") && (name == "Lock" || name == "RLock"):
		id.op = opLock
	case path == errgroupPath && recvType == "Group":
		id.op = map[string]op{"Go": opErrGo, "TryGo": opErrTryGo, "Wait": opErrWait, "SetLimit": opErrLimit}[name]
	case path == ParlibPath && recvType != "":
		switch name {
		case "Spawn":
			id.op = opGroupSpawn
		case "Sync":
			id.op = opGroupSync
		case "Wait":
			id.op = opTaskWait
		}
	case path == ParlibPath:
		switch {
		case name == "Spawn":
			id.op = opSpawn
		case name == "Do":
			id.op = opDo
		case strings.HasPrefix(name, "For"):
			id.op = opFor
		}
	case path == "runtime" && name == "Gosched":
		id.op = opGosched
	case path == "runtime" && name == "Goexit":
		id.op = opGoexit
	}
	if id.op == opNone {
		id.recv = nil // only idioms report a receiver
		id.args = call.Args
	}
	return id
}

// objectKind returns the kind of join object of type t, or 0.
func objectKind(t types.Type) ObjectKind {
	n, ok := deref(t).(*types.Named)
	if !ok || n.Obj().Pkg() == nil {
		return 0
	}
	switch path, name := n.Obj().Pkg().Path(), n.Obj().Name(); {
	case path == syncPath && name == "WaitGroup":
		return WaitGroup
	case path == errgroupPath && name == "Group":
		return Errgroup
	case path == ParlibPath && name == "Group":
		return ParlibGroup
	case path == ParlibPath && name == "Task":
		return ParlibTask
	}
	return 0
}

// createsObject reports whether call makes a new parlib join object: a
// parlib.Spawn (its Task), Do or For call.
func (c *collector) createsObject(call *ast.CallExpr) bool {
	switch classify(c.info, call).op {
	case opSpawn, opDo, opFor:
		return true
	}
	return false
}

// carriesSync returns a description of what in t lets a callee wait on
// another goroutine (a channel, a sync.Cond, a join object), or "". It looks
// through pointers, slices, arrays, maps and struct fields, a few levels
// deep.
func carriesSync(t types.Type) string {
	return carries(t, 0, make(map[types.Type]bool))
}

func carries(t types.Type, depth int, seen map[types.Type]bool) string {
	if depth > 4 || seen[t] {
		return ""
	}
	seen[t] = true
	if n, ok := t.(*types.Named); ok && n.Obj().Pkg() != nil {
		path, name := n.Obj().Pkg().Path(), n.Obj().Name()
		switch {
		case path == syncPath && (name == "Cond" || name == "WaitGroup"):
			return "sync." + name
		case objectKind(n) != 0:
			return objectKind(n).String()
		}
	}
	switch u := t.Underlying().(type) {
	case *types.Chan:
		return "a channel"
	case *types.Pointer:
		return carries(u.Elem(), depth+1, seen)
	case *types.Slice:
		return carries(u.Elem(), depth+1, seen)
	case *types.Array:
		return carries(u.Elem(), depth+1, seen)
	case *types.Map:
		return carries(u.Elem(), depth+1, seen)
	case *types.Struct:
		for f := range u.Fields() {
			if d := carries(f.Type(), depth+1, seen); d != "" {
				return d
			}
		}
	}
	return ""
}
