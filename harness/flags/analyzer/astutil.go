// AST and type helpers the other parts share: function lookup, import closures, constant and
// literal resolution, printing expressions.

package main

import (
	"fmt"
	"go/ast"
	"go/printer"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/packages"
)

func lookupFunc(prog *program, qualified string) (*types.Func, error) {
	dot := strings.LastIndex(qualified, ".")
	pkg := prog.byPath[qualified[:dot]]
	if pkg == nil {
		return nil, fmt.Errorf("package %s not loaded", qualified[:dot])
	}
	fn, _ := pkg.Types.Scope().Lookup(qualified[dot+1:]).(*types.Func)
	if fn == nil {
		return nil, fmt.Errorf("function %s not found", qualified)
	}
	return fn, nil
}

// importClosure lists the packages the given command packages import, transitively. One load
// holds several commands, and the others' code must not count for this one.
func importClosure(prog *program, patterns []string) map[string]bool {
	closure := map[string]bool{}
	var visit func(p *packages.Package)
	visit = func(p *packages.Package) {
		if closure[p.PkgPath] {
			return
		}
		closure[p.PkgPath] = true
		for _, imp := range p.Imports {
			visit(imp)
		}
	}
	for _, pat := range patterns {
		if p := prog.byPath[pat]; p != nil {
			visit(p)
		}
	}
	return closure
}

func describe(steps []step, root *types.Var) (display, path string) {
	if len(steps) == 0 {
		if root == nil {
			return "", ""
		}
		n := root.Name()
		if root.Pkg() != nil && root.Parent() == root.Pkg().Scope() {
			n = root.Pkg().Name() + "." + n
		} else {
			n = "(local) " + n
		}
		return n, n
	}
	last := steps[len(steps)-1]
	display = ownerName(last.owner) + "." + last.v.Name()
	if root != nil {
		path = root.Pkg().Name() + "." + root.Name() + joinSteps(steps)
	} else {
		path = ownerName(steps[0].owner) + joinSteps(steps)
	}
	return display, path
}

func isLookup(f *types.Func) bool {
	if isRegistration(f) {
		return false
	}
	n := f.Name()
	if strings.HasPrefix(n, "Mark") || strings.HasPrefix(n, "Set") || n == "AddFlag" || n == "AddGoFlag" {
		return false
	}
	sig := f.Type().(*types.Signature)
	if sig.Recv() != nil && isFlagSetPtr(sig.Recv().Type()) {
		return n == "Lookup" || n == "Changed" || strings.HasPrefix(n, "Get")
	}
	for i := 0; i < sig.Params().Len(); i++ {
		if isFlagSetPtr(sig.Params().At(i).Type()) {
			return true
		}
	}
	return false
}

func constIdent(info *types.Info, e ast.Expr) *types.Const {
	switch x := ast.Unparen(e).(type) {
	case *ast.Ident:
		c, _ := info.Uses[x].(*types.Const)
		return c
	case *ast.SelectorExpr:
		c, _ := info.Uses[x.Sel].(*types.Const)
		return c
	}
	return nil
}

func exprString(fset *token.FileSet, e ast.Expr) string {
	var b strings.Builder
	_ = printerFprint(&b, fset, e)
	return b.String()
}

// varLiteral is a package-level `var name = T{...}` declaration.
type varLiteral struct {
	name *ast.Ident
	lit  *ast.CompositeLit
}

// packageVarLiterals lists a package's package-level variables initialised with a composite literal.
func packageVarLiterals(p *packages.Package) []varLiteral {
	var out []varLiteral
	for _, f := range p.Syntax {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, s := range gd.Specs {
				vs := s.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if i >= len(vs.Values) {
						continue
					}
					if cl, ok := vs.Values[i].(*ast.CompositeLit); ok {
						out = append(out, varLiteral{id, cl})
					}
				}
			}
		}
	}
	return out
}

// stringMapVar reads a package-level map[string]string literal (etcd's deprecatedFlags).
func stringMapVar(p *packages.Package, name string) map[string]string {
	out := map[string]string{}
	for _, vl := range packageVarLiterals(p) {
		if vl.name.Name != name {
			continue
		}
		for _, el := range vl.lit.Elts {
			kv, ok := el.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			k, ok1 := constString(p.TypesInfo, kv.Key)
			v, ok2 := constString(p.TypesInfo, kv.Value)
			if ok1 && ok2 {
				out[k] = v
			}
		}
	}
	return out
}

func printerFprint(b *strings.Builder, fset *token.FileSet, e ast.Expr) error {
	return printer.Fprint(b, fset, e)
}
