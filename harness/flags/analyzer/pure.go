// Pure calls, for msgonly.go: a call is pure when the caller can see nothing of it but its
// results. That is so for a presenting method (the convention msgonly.go's shape (a) rests on),
// for the standard library's string, number and URL functions listed below, for zap's field
// constructors and klog's object references, and for a function whose body (indexed) writes only
// its own variables, starts no goroutine, defers nothing, sends or receives nothing, and calls
// only pure functions. Anything else (an interface call, a func value, a body not loaded) is not.

package main

import (
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/types/typeutil"
)

// pureBuiltin: builtins without effects (append writes only past the length it is given).
var pureBuiltin = map[string]bool{"len": true, "cap": true, "min": true, "max": true, "make": true, "new": true, "append": true, "real": true, "imag": true, "complex": true}

// pureStdPkgs: standard packages whose functions (not methods) have no effect.
var pureStdPkgs = map[string]bool{"strings": true, "strconv": true, "bytes": true, "unicode": true, "unicode/utf8": true, "path": true, "errors": true, "math": true, "net/url": true, "net/netip": true}

// pureStdMethods: methods of standard types that only compute from their receiver.
var pureStdMethods = map[string]bool{"net/url.URL": true, "net/url.Values": true, "net.IP": true, "net/netip.Addr": true, "time.Duration": true}

func (ix *index) allPure(fs []*types.Func) bool {
	for _, f := range fs {
		if !ix.pure(f) {
			return false
		}
	}
	return true
}

func (ix *index) pure(f *types.Func) bool {
	f = f.Origin()
	if v, ok := ix.pureMemo[f]; ok {
		return v
	}
	ix.pureMemo[f] = false // a recursive call is not assumed pure
	v := ix.computePure(f)
	ix.pureMemo[f] = v
	return v
}

func (ix *index) computePure(f *types.Func) bool {
	if isPresenter(f) {
		return true
	}
	if f.Pkg() == nil {
		return false
	}
	path, recv := f.Pkg().Path(), recvName(f)
	switch {
	case recv == "" && pureStdPkgs[path]:
		return true
	case recv != "" && pureStdMethods[path+"."+recv]:
		return true
	case path == "fmt":
		return recv == "" && (f.Name() == "Sprint" || f.Name() == "Sprintf" || f.Name() == "Sprintln" || f.Name() == "Errorf")
	case path == "go.uber.org/zap" && recv == "":
		sig := f.Type().(*types.Signature)
		return sig.Results().Len() == 1 && types.TypeString(types.Unalias(sig.Results().At(0).Type()), nil) == "go.uber.org/zap/zapcore.Field"
	case path == "k8s.io/klog/v2" && recv == "":
		return f.Name() == "KObj" || f.Name() == "KRef" || f.Name() == "KObjSlice" || f.Name() == "KObjs"
	}
	n := ix.funcs[f]
	if n == nil || n.decl == nil || n.decl.Body == nil {
		return false
	}
	return ix.pureBody(n)
}

// pureBody: the declaration writes only variables declared in it and calls only pure functions.
func (ix *index) pureBody(n *funcNode) bool {
	info := n.pkg.TypesInfo
	local := func(e ast.Expr) bool {
		id, ok := ast.Unparen(e).(*ast.Ident)
		if !ok {
			return false
		}
		if id.Name == "_" {
			return true
		}
		obj := info.ObjectOf(id)
		return obj != nil && obj.Pos() >= n.decl.Pos() && obj.Pos() < n.decl.End()
	}
	ok := true
	ast.Inspect(n.decl.Body, func(x ast.Node) bool {
		if !ok {
			return false
		}
		switch x := x.(type) {
		case *ast.GoStmt, *ast.DeferStmt, *ast.SendStmt, *ast.SelectStmt:
			ok = false
		case *ast.UnaryExpr:
			ok = x.Op != token.ARROW
		case *ast.AssignStmt:
			for _, l := range x.Lhs {
				ok = ok && (x.Tok == token.DEFINE || local(l))
			}
		case *ast.IncDecStmt:
			ok = local(x.X)
		case *ast.RangeStmt:
			if x.Tok == token.ASSIGN {
				ok = (x.Key == nil || local(x.Key)) && (x.Value == nil || local(x.Value))
			}
		case *ast.CallExpr:
			f, known := callTarget(info, x)
			ok = known && (f == nil || ix.pure(f))
		}
		return ok
	})
	return ok
}

// callTarget: the function a call calls; nil with ok for a conversion or a pure builtin, not ok
// for an impure builtin or a call of a func value.
func callTarget(info *types.Info, c *ast.CallExpr) (f *types.Func, ok bool) {
	if tv, has := info.Types[c.Fun]; has && tv.IsType() {
		return nil, true
	}
	switch x := typeutil.Callee(info, c).(type) {
	case *types.Builtin:
		return nil, pureBuiltin[x.Name()]
	case *types.Func:
		return x, true
	}
	return nil, false
}
