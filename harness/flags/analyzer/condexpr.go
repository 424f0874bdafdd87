// The condition expressions of cond.go: which flags a branch's condition requires to be set
// (non-default), which flags it reads at all, and which early returns a healthy start passes.

package main

import (
	"sort"

	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
)

// clauses is what a condition requires of the flags: each clause, that one of its flags has a
// non-default value. A read of a flag is conditional on another when a clause lacks the read's
// own flag: `if len(cert) != 0 || len(key) != 0` requires nothing more of either flag's reads,
// `if len(cert) > 0 && len(key) > 0` requires the other flag of each.
type clauses []map[int]bool

// needs: the flags, sorted, of the clauses that the read's own flag does not satisfy.
func (cs clauses) needs(flag int) []int {
	seen := map[int]bool{}
	var out []int
	for _, cl := range cs {
		if cl[flag] {
			continue
		}
		for f := range cl {
			if !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	sort.Ints(out)
	return out
}

// requires: what e (when it evaluates to sense) requires of the flags. A conjunction requires
// what each operand requires; a disjunction, that one of the flags of both operands is set
// (only when both operands require a flag).
func (c *conds) requires(info *types.Info, e ast.Expr, sense bool) clauses {
	switch x := ast.Unparen(e).(type) {
	case *ast.UnaryExpr:
		if x.Op == token.NOT {
			return c.requires(info, x.X, !sense)
		}
	case *ast.BinaryExpr:
		switch x.Op {
		case token.LAND, token.LOR:
			l, r := c.requires(info, x.X, sense), c.requires(info, x.Y, sense)
			if (x.Op == token.LAND) == sense {
				return append(append(clauses{}, l...), r...) // both operands hold
			}
			if len(l) > 0 && len(r) > 0 {
				one := map[int]bool{} // one of them holds: one of all their flags is set
				for _, cl := range append(append(clauses{}, l...), r...) {
					for f := range cl {
						one[f] = true
					}
				}
				return clauses{one}
			}
			return nil
		case token.EQL, token.NEQ, token.GTR:
			return c.compare(info, x, sense)
		}
	}
	// A bool flag tested as it is: `if cfg.ClientAutoTLS`.
	if t := info.TypeOf(e); t != nil {
		if b, ok := t.Underlying().(*types.Basic); ok && b.Kind() == types.Bool {
			return c.flagsWhere(e, func(def string) bool { return (def == "true") != sense })
		}
	}
	return nil
}

// compare: `x == C`, `x != C`, `len(x) > 0`, `len(x) != 0` with x a flag's field and C a constant.
func (c *conds) compare(info *types.Info, x *ast.BinaryExpr, sense bool) clauses {
	subj, k := x.X, x.Y
	if _, isConst := constOf(info, subj); isConst {
		subj, k = k, subj
	}
	kv, ok := constOf(info, k)
	if !ok {
		return nil
	}
	isLen := false
	if ce, ok := ast.Unparen(subj).(*ast.CallExpr); ok && len(ce.Args) == 1 {
		if id, ok := ast.Unparen(ce.Fun).(*ast.Ident); ok && id.Name == "len" {
			if _, builtin := info.Uses[id].(*types.Builtin); builtin {
				subj, isLen = ce.Args[0], true
			}
		}
	}
	if x.Op == token.GTR && !(isLen && kv == "0") {
		return nil
	}
	if isLen && kv != "0" {
		return nil
	}
	// equal: whether the branch taken (sense) has x equal to C (for len: x empty).
	equal := (x.Op == token.EQL) == sense
	if x.Op == token.GTR {
		equal = !sense
	}
	return c.flagsWhere(subj, func(def string) bool {
		if isLen || kv == "" || kv == "0" || kv == "false" || kv == "nil" {
			return equal != zeroDefault(def) // x empty on a non-empty default, or x set on an empty one
		}
		return equal != (def == kv)
	})
}

// constOf is e's constant value as pflag would print a default ("" for the empty string, nil).
func constOf(info *types.Info, e ast.Expr) (string, bool) {
	if id, ok := ast.Unparen(e).(*ast.Ident); ok && id.Name == "nil" {
		if _, isNil := info.Uses[id].(*types.Nil); isNil {
			return "nil", true
		}
	}
	tv, ok := info.Types[e]
	if !ok || tv.Value == nil {
		return "", false
	}
	if tv.Value.Kind() == constant.String {
		return constant.StringVal(tv.Value), true
	}
	return tv.Value.ExactString(), true
}

func zeroDefault(def string) bool {
	switch def {
	case "", "0", "false", "[]", "0s", "map[]", "<nil>", "nil":
		return true
	}
	return false
}

// flagsWhere: the flags e is attributed to whose default makes nonDefault(default) true, as one
// clause.
func (c *conds) flagsWhere(e ast.Expr, nonDefault func(def string) bool) clauses {
	out := map[int]bool{}
	for f := range c.flagOf[ast.Unparen(e)] {
		if nonDefault(c.a.flags[f].Default) {
			out[f] = true
		}
	}
	if len(out) == 0 {
		return nil
	}
	return clauses{out}
}

// mentions: the flags whose fields e reads.
func (c *conds) mentions(e ast.Expr) map[int]bool {
	out := map[int]bool{}
	if e == nil {
		return out
	}
	ast.Inspect(e, func(n ast.Node) bool {
		if x, ok := n.(ast.Expr); ok {
			for f := range c.flagOf[x] {
				out[f] = true
			}
		}
		return true
	})
	return out
}

// healthy: an early return on this condition is one a healthy start does not take: an error
// check (`err != nil`), a nil parameter or receiver (`if s == nil { return nil }`), or either.
func (ix *index) healthy(info *types.Info, e ast.Expr) bool {
	x, ok := ast.Unparen(e).(*ast.BinaryExpr)
	if !ok {
		return false
	}
	if x.Op == token.LOR {
		return ix.healthy(info, x.X) && ix.healthy(info, x.Y)
	}
	if _, isNil := constOf(info, x.Y); !isNil || (x.Op != token.NEQ && x.Op != token.EQL) {
		return false
	}
	if k, _ := constOf(info, x.Y); k != "nil" {
		return false
	}
	if x.Op == token.NEQ {
		return types.Identical(info.TypeOf(x.X), types.Universe.Lookup("error").Type())
	}
	id, ok := ast.Unparen(x.X).(*ast.Ident)
	if !ok {
		return false
	}
	v, _ := info.Uses[id].(*types.Var)
	return v != nil && ix.params[v]
}

func disjunction(list []ast.Expr) ast.Expr {
	e := list[0]
	for _, x := range list[1:] {
		e = &ast.BinaryExpr{X: e, Op: token.LOR, Y: x}
	}
	return e
}

// failure: the block ends by returning an error (`return nil, fmt.Errorf(…)`, a local err) or panics: the
// early return of a check that a healthy start passes, whatever flags it tests.
func failure(info *types.Info, b *ast.BlockStmt) bool {
	switch s := b.List[len(b.List)-1].(type) {
	case *ast.ReturnStmt:
		if len(s.Results) == 0 {
			return false
		}
		last := s.Results[len(s.Results)-1]
		if k, ok := constOf(info, last); ok && k == "nil" {
			return false
		}
		if id, ok := ast.Unparen(last).(*ast.Ident); ok {
			if v, _ := info.Uses[id].(*types.Var); v == nil || isPackageVar(v) {
				return false // a package's error state (etcd's defaultHostStatus) may well be nil
			}
		}
		t := info.TypeOf(last)
		return t != nil && types.Implements(t, types.Universe.Lookup("error").Type().Underlying().(*types.Interface))
	case *ast.ExprStmt:
		return true // terminates: a panic
	}
	return false
}

// terminates: the block ends in a return, a branch (continue, break, goto) or a panic.
func terminates(b *ast.BlockStmt) bool {
	if len(b.List) == 0 {
		return false
	}
	switch s := b.List[len(b.List)-1].(type) {
	case *ast.ReturnStmt, *ast.BranchStmt:
		return true
	case *ast.ExprStmt:
		if ce, ok := s.X.(*ast.CallExpr); ok {
			if id, ok := ce.Fun.(*ast.Ident); ok && id.Name == "panic" {
				return true
			}
		}
	}
	return false
}
