// Occurrences that are no read site of their own: the value only goes into the message of a check
// that reads the same expression in its condition, or the line is reached only once a guard has
// returned for every non-empty value of the expression.

package main

import (
	"go/ast"
	"go/token"
	"go/types"
)

// messageOfCheck: e only formats the message (o.logged: fmt.Errorf, klog, zap) of the innermost
// `if` whose body holds it, and that if's condition reads e itself. The condition is the read
// site (`if o.MaxAge < 0`); the message line (`fmt.Errorf("--audit-log-maxage %v can't be a
// negative number", o.MaxAge)`) runs only for a value the check rejects, so citing it as a
// second site adds a line no valid flag value reaches.
func messageOfCheck(e ast.Expr, stack []ast.Node) bool {
	return outward(e, stack, func(n, child ast.Node) (bool, bool) {
		switch n := n.(type) {
		case *ast.FuncLit:
			return true, false
		case *ast.IfStmt:
			return true, n.Body == child && mentions(n.Cond, types.ExprString(e))
		}
		return false, false
	})
}

// mentions: some sub-expression of cond prints as want.
func mentions(cond ast.Expr, want string) bool {
	found := false
	ast.Inspect(cond, func(n ast.Node) bool {
		if x, ok := n.(ast.Expr); ok && !found && types.ExprString(x) == want {
			found = true
		}
		return !found
	})
	return found
}

// afterNonEmptyReturn: e is in the function's own body (not in a function literal), after a
// statement of that body `if len(X) != 0 || … { …; return }` (or `X != ""`, `X != nil`, `len(X) > 0`)
// with X printing as e. Past that guard X is empty, or holds what the function wrote into it since:
// never a value the flag gave. (apiserver's MaybeDefaultWithSelfSignedCerts returns at once when
// --tls-cert-file or --tls-private-key-file is set; the lines after it read the paths it derives
// from --cert-dir.)
func afterNonEmptyReturn(e ast.Expr, stack []ast.Node) bool {
	if len(stack) < 2 {
		return false
	}
	body, ok := stack[0].(*ast.BlockStmt)
	if !ok {
		return false
	}
	for _, n := range stack {
		if _, lit := n.(*ast.FuncLit); lit {
			return false
		}
	}
	want := types.ExprString(e)
	for _, st := range body.List {
		if st == stack[1] {
			return false
		}
		if g, ok := st.(*ast.IfStmt); ok && g.Else == nil && endsInReturn(g.Body) && nonEmptyTest(g.Cond, want) {
			return true
		}
	}
	return false
}

func endsInReturn(b *ast.BlockStmt) bool {
	if len(b.List) == 0 {
		return false
	}
	_, ok := b.List[len(b.List)-1].(*ast.ReturnStmt)
	return ok
}

// nonEmptyTest: cond is a disjunction one of whose terms holds exactly when want is non-empty.
func nonEmptyTest(cond ast.Expr, want string) bool {
	switch c := ast.Unparen(cond).(type) {
	case *ast.BinaryExpr:
		if c.Op == token.LOR {
			return nonEmptyTest(c.X, want) || nonEmptyTest(c.Y, want)
		}
		if c.Op != token.NEQ && c.Op != token.GTR {
			return false
		}
		lhs, rhs := types.ExprString(c.X), types.ExprString(c.Y)
		if lhs == "len("+want+")" && rhs == "0" {
			return true
		}
		return c.Op == token.NEQ && lhs == want && (rhs == `""` || rhs == "nil")
	}
	return false
}
