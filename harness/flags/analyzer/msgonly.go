// Reads that only make a message are no read site. The rule: a read is a site when its value can
// change what the process does; a read whose value can change only the text a person reads (a log
// line, a value printed) cannot. Three shapes qualify, each for this occurrence alone (another read
// of the same field, or of a copy, is judged on its own):
//
//	(a) the read is in a method that presents its receiver, by the signatures fmt and error call
//	    to print a value: String() string, GoString() string, Error() string, Format(fmt.State,
//	    rune); unless some code calls the method by name for its text other than into a message
//	    (a map key); a call through an interface (fmt.Stringer, error) is taken to be fmt's;
//	(b) the value reaches only the arguments of a log call that prints and returns (klog's
//	    Info*/Warning*/Error*, klog.V(n)'s, a logr or zap logger's Debug/Info/Warn/Error*, log.Print*),
//	    through zap fields, fmt.Sprint*, conversions and other calls without effects (pure.go);
//	(c) the read is in the condition of an `if` with no else, whose init and condition have no
//	    effect and whose body is nothing but such log calls: the value decides only whether a
//	    line is logged.
//
// Fatal*, Exit*, Panic* and DPanic end or unwind the process: a read that feeds one is behaviour.

package main

import (
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/types/typeutil"
)

// msgCand: the occurrence makes only a message if every callee is pure and, for a read in a
// presenting method, no code uses that method's text as data. settleMessages decides.
type msgCand struct {
	callees   []*types.Func
	presenter *types.Func
}

// messageCandidate: the shape (a), (b) or (c) the occurrence e has, if any.
func messageCandidate(info *types.Info, fn *funcNode, e ast.Expr, stack []ast.Node) *msgCand {
	if ok, callees := intoLogArgs(info, e, stack); ok {
		return &msgCand{callees: callees}
	}
	if ok, callees := logOnlyCondition(info, e, stack); ok {
		return &msgCand{callees: callees}
	}
	if fn.obj != nil && isPresenter(fn.obj) {
		return &msgCand{presenter: fn.obj}
	}
	return nil
}

// isPresenter: f is a method with the signature by which fmt or error prints a value.
func isPresenter(f *types.Func) bool {
	sig, ok := f.Type().(*types.Signature)
	if !ok || sig.Recv() == nil {
		return false
	}
	switch f.Name() {
	case "String", "GoString", "Error":
		if sig.Params().Len() != 0 || sig.Results().Len() != 1 {
			return false
		}
		b, ok := sig.Results().At(0).Type().(*types.Basic)
		return ok && b.Kind() == types.String
	case "Format":
		return sig.Params().Len() == 2 && sig.Results().Len() == 0 &&
			types.TypeString(sig.Params().At(0).Type(), nil) == "fmt.State" && types.Identical(sig.Params().At(1).Type(), types.Typ[types.Rune])
	}
	return false
}

// intoLogArgs is shape (b): from e outward, only value operations and calls that take the value,
// up to a message log call that takes it as an argument. It returns the calls passed on the way,
// which must be pure. && and || are not passed: the value would decide what else runs.
func intoLogArgs(info *types.Info, e ast.Expr, stack []ast.Node) (bool, []*types.Func) {
	var callees []*types.Func
	child := ast.Node(e)
	for i := len(stack) - 1; i >= 0; i-- {
		n := stack[i]
		if n == e {
			continue
		}
		switch n := n.(type) {
		case *ast.ParenExpr, *ast.StarExpr, *ast.IndexExpr, *ast.IndexListExpr, *ast.SliceExpr,
			*ast.KeyValueExpr, *ast.CompositeLit, *ast.TypeAssertExpr, *ast.SelectorExpr:
		case *ast.UnaryExpr:
			if n.Op == token.ARROW {
				return false, nil
			}
		case *ast.BinaryExpr:
			if n.Op == token.LAND || n.Op == token.LOR {
				return false, nil
			}
		case *ast.CallExpr:
			f, ok := callTarget(info, n)
			switch {
			case !ok:
				return false, nil // an impure builtin, a call of a func value
			case f != nil && n.Fun != child && isMessageLog(f):
				return true, callees
			case f != nil:
				callees = append(callees, f)
			}
		default:
			return false, nil // a statement, a function literal
		}
		child = n
	}
	return false, nil
}

// logOnlyCondition is shape (c): e is in the condition of an if with no else whose init is a
// definition and whose body holds only message log calls. It returns every call in the init,
// the condition and the log calls' arguments and receivers (but the log calls themselves and
// calls that return a logger), which must be pure.
func logOnlyCondition(info *types.Info, e ast.Expr, stack []ast.Node) (bool, []*types.Func) {
	var ifs *ast.IfStmt
	child := ast.Node(e)
	for i := len(stack) - 1; i >= 0 && ifs == nil; i-- {
		n := stack[i]
		if n == e {
			continue
		}
		switch n := n.(type) {
		case *ast.IfStmt:
			if n.Cond != child {
				return false, nil
			}
			ifs = n
		case ast.Stmt, *ast.FuncLit:
			return false, nil
		}
		child = n
	}
	if ifs == nil || ifs.Else != nil || len(ifs.Body.List) == 0 {
		return false, nil
	}
	var parts []ast.Node
	if ifs.Init != nil {
		as, ok := ifs.Init.(*ast.AssignStmt)
		if !ok || as.Tok != token.DEFINE {
			return false, nil
		}
		for _, r := range as.Rhs {
			parts = append(parts, r)
		}
	}
	parts = append(parts, ifs.Cond)
	for _, st := range ifs.Body.List {
		es, ok := st.(*ast.ExprStmt)
		if !ok {
			return false, nil
		}
		c, ok := ast.Unparen(es.X).(*ast.CallExpr)
		if !ok {
			return false, nil
		}
		f, _ := typeutil.Callee(info, c).(*types.Func)
		if f == nil || !isMessageLog(f) {
			return false, nil
		}
		parts = append(parts, c.Fun)
		for _, a := range c.Args {
			parts = append(parts, a)
		}
	}
	var callees []*types.Func
	for _, p := range parts {
		cs, ok := callsIn(info, p)
		if !ok {
			return false, nil
		}
		callees = append(callees, cs...)
	}
	return true, callees
}

// callsIn lists the functions n calls, but conversions, pure builtins, the message log calls and
// calls that return a logger; false when n calls a func value or an impure builtin, receives
// from a channel, or holds a function literal.
func callsIn(info *types.Info, n ast.Node) ([]*types.Func, bool) {
	var out []*types.Func
	ok := true
	ast.Inspect(n, func(x ast.Node) bool {
		if !ok {
			return false
		}
		switch x := x.(type) {
		case *ast.FuncLit:
			ok = false
		case *ast.UnaryExpr:
			ok = x.Op != token.ARROW
		case *ast.CallExpr:
			f, known := callTarget(info, x)
			ok = known
			if f != nil && !isMessageLog(f) && !isLoggerType(info.TypeOf(x)) {
				out = append(out, f)
			}
		}
		return ok
	})
	return out, ok
}

// presenterCall notes a use of a presenting method outside its own body: a call whose text only
// goes into a message (its callees to be checked pure), or else a use as data.
type presenterCall struct {
	method  *types.Func
	msg     bool
	callees []*types.Func
}

// notePresenterUse: id names a presenting method; record how the code around it uses the method.
func (ix *index) notePresenterUse(info *types.Info, f *types.Func, id *ast.Ident, stack []ast.Node) {
	u := presenterCall{method: f.Origin()}
	// stack ends with id; a call is id's selector (stack[-2]) as the Fun of stack[-3].
	if k := len(stack); k >= 3 {
		if sel, ok := stack[k-2].(*ast.SelectorExpr); ok && sel.Sel == id {
			if c, ok := stack[k-3].(*ast.CallExpr); ok && c.Fun == sel {
				u.msg, u.callees = intoLogArgs(info, c, stack[:k-2])
			}
		}
	}
	ix.presenterCalls = append(ix.presenterCalls, u)
}

// settleMessages marks the occurrences that only make a message, once every function body is
// indexed (purity needs the callees' bodies).
func (ix *index) settleMessages() {
	asData := map[*types.Func]bool{}
	for _, u := range ix.presenterCalls {
		if !u.msg || !ix.allPure(u.callees) {
			asData[u.method] = true
		}
	}
	settle := func(occs map[*types.Var][]*occ) {
		for _, os := range occs {
			for _, o := range os {
				if o.msg != nil {
					o.message = (o.msg.presenter == nil || !asData[o.msg.presenter.Origin()]) && ix.allPure(o.msg.callees)
					o.msg = nil
				}
			}
		}
	}
	settle(ix.fieldOccs)
	settle(ix.varOccs)
	ix.presenterCalls = nil
}
