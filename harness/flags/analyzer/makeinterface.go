// Where a value becomes an interface value (SSA's MakeInterface), found in the syntax: the types
// rapid type analysis (rta.go) lets interface calls dispatch to.

package main

import (
	"go/ast"
	"go/token"
	"go/types"
)

// isInterface: a variable of type t holds an interface value (a type parameter does not: its
// instantiation is counted where it is instantiated).
func isInterface(t types.Type) bool {
	if t == nil {
		return false
	}
	if _, tp := types.Unalias(t).(*types.TypeParam); tp {
		return false
	}
	return types.IsInterface(t)
}

// noteConverted records in fn the named types whose values node n converts to an interface (SSA's
// MakeInterface): an explicit conversion I(x), and every implicit one, where a value of a concrete
// type is assigned, passed, returned, sent, stored in a composite literal or compared where an
// interface is expected. Only those types can receive an interface method call; a type that is
// merely constructed cannot (etcd's TLSInfo is built by kube-apiserver but never made an
// interface, so the linker drops TLSInfo.String). The type arguments of an instantiation count
// too (generic code may convert a T). stack holds n's ancestors within fn's body, for returns.
func noteConverted(info *types.Info, fn *funcNode, n ast.Node, stack []ast.Node) {
	addType := func(t types.Type) {
		if tn := madeType(t); tn != nil {
			fn.makes = append(fn.makes, tn)
		}
	}
	add := func(e ast.Expr, to types.Type) {
		if !isInterface(to) {
			return
		}
		if tv, ok := info.Types[e]; ok && !tv.IsType() && tv.Type != nil && !isInterface(tv.Type) {
			addType(tv.Type)
		}
	}
	// Values flowing into targets: one each, or a multi-value call spread over them.
	flow := func(values []ast.Expr, targets func(i int) types.Type, n int) {
		if len(values) == 1 && n > 1 {
			if tup, ok := info.Types[values[0]].Type.(*types.Tuple); ok {
				for i := 0; i < tup.Len() && i < n; i++ {
					if isInterface(targets(i)) && !isInterface(tup.At(i).Type()) {
						addType(tup.At(i).Type())
					}
				}
			}
			return
		}
		for i, v := range values {
			if i < n {
				add(v, targets(i))
			}
		}
	}
	switch n := n.(type) {
	case *ast.Ident:
		if inst, ok := info.Instances[n]; ok {
			for i := 0; i < inst.TypeArgs.Len(); i++ {
				addType(inst.TypeArgs.At(i))
			}
		}
	case *ast.CallExpr:
		noteCallConversions(info, n, add, flow)
	case *ast.AssignStmt:
		if n.Tok != token.ASSIGN && n.Tok != token.DEFINE {
			return
		}
		flow(n.Rhs, func(i int) types.Type { return lhsType(info, n.Lhs[i]) }, len(n.Lhs))
	case *ast.ValueSpec:
		if n.Type != nil {
			t := info.Types[n.Type].Type
			flow(n.Values, func(int) types.Type { return t }, len(n.Names))
		}
	case *ast.ReturnStmt:
		if sig := enclosingSignature(info, fn, stack); sig != nil {
			flow(n.Results, func(i int) types.Type { return sig.Results().At(i).Type() }, sig.Results().Len())
		}
	case *ast.CompositeLit:
		noteLiteralConversions(info, n, add)
	case *ast.SendStmt:
		if ch, ok := info.Types[n.Chan].Type.Underlying().(*types.Chan); ok {
			add(n.Value, ch.Elem())
		}
	case *ast.BinaryExpr:
		if n.Op == token.EQL || n.Op == token.NEQ {
			add(n.X, info.Types[n.Y].Type)
			add(n.Y, info.Types[n.X].Type)
		}
	}
}

func lhsType(info *types.Info, e ast.Expr) types.Type {
	if id, ok := e.(*ast.Ident); ok {
		if obj := info.Defs[id]; obj != nil {
			return obj.Type()
		}
		if obj := info.Uses[id]; obj != nil {
			return obj.Type()
		}
		return nil // _
	}
	return info.Types[e].Type
}

// enclosingSignature is the signature a return statement returns from: the innermost function
// literal around it, else fn's own.
func enclosingSignature(info *types.Info, fn *funcNode, stack []ast.Node) *types.Signature {
	for i := len(stack) - 1; i >= 0; i-- {
		if lit, ok := stack[i].(*ast.FuncLit); ok {
			sig, _ := info.Types[lit].Type.(*types.Signature)
			return sig
		}
	}
	if fn.obj != nil {
		return fn.obj.Type().(*types.Signature)
	}
	return nil
}

// noteCallConversions: I(x), a builtin's interface operand (append to a []I, panic), and each
// argument passed for an interface parameter (variadic ones included).
func noteCallConversions(info *types.Info, c *ast.CallExpr, add func(ast.Expr, types.Type), flow func([]ast.Expr, func(int) types.Type, int)) {
	tv, ok := info.Types[c.Fun]
	if !ok {
		return
	}
	if tv.IsType() {
		if len(c.Args) == 1 {
			add(c.Args[0], tv.Type)
		}
		return
	}
	if id, ok := ast.Unparen(c.Fun).(*ast.Ident); ok {
		if b, ok := info.Uses[id].(*types.Builtin); ok {
			switch b.Name() {
			case "append":
				if s, ok := info.Types[c.Args[0]].Type.Underlying().(*types.Slice); ok && !c.Ellipsis.IsValid() {
					for _, a := range c.Args[1:] {
						add(a, s.Elem())
					}
				}
			case "panic":
				add(c.Args[0], types.Universe.Lookup("any").Type())
			}
			return
		}
	}
	sig, ok := tv.Type.Underlying().(*types.Signature)
	if !ok {
		return
	}
	params := sig.Params()
	param := func(i int) types.Type {
		if sig.Variadic() && i >= params.Len()-1 {
			if c.Ellipsis.IsValid() {
				return nil // the slice itself is passed
			}
			return params.At(params.Len() - 1).Type().(*types.Slice).Elem()
		}
		if i < params.Len() {
			return params.At(i).Type()
		}
		return nil
	}
	n := params.Len()
	if sig.Variadic() {
		n = len(c.Args)
		if len(c.Args) == 1 {
			n = params.Len()
		}
	}
	flow(c.Args, param, n)
}

// noteLiteralConversions: the elements of T{...} stored in interface-typed fields, elements or map keys.
func noteLiteralConversions(info *types.Info, lit *ast.CompositeLit, add func(ast.Expr, types.Type)) {
	tv, ok := info.Types[lit]
	if !ok {
		return
	}
	t := tv.Type.Underlying()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem().Underlying()
	}
	for i, elt := range lit.Elts {
		kv, isKV := elt.(*ast.KeyValueExpr)
		switch u := t.(type) {
		case *types.Struct:
			if isKV {
				if id, ok := kv.Key.(*ast.Ident); ok {
					for j := 0; j < u.NumFields(); j++ {
						if u.Field(j).Name() == id.Name {
							add(kv.Value, u.Field(j).Type())
						}
					}
				}
			} else if i < u.NumFields() {
				add(elt, u.Field(i).Type())
			}
		case *types.Slice, *types.Array:
			elem := u.(interface{ Elem() types.Type }).Elem()
			if isKV {
				add(kv.Value, elem)
			} else {
				add(elt, elem)
			}
		case *types.Map:
			if isKV {
				add(kv.Key, u.Key())
				add(kv.Value, u.Elem())
			}
		}
	}
}
