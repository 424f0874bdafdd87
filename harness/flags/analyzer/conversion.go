// Conversion copies: where a hand-written conversion function puts a versioned config field's value
// into an internal field of another name or place (config.go follows the value there).

package main

import (
	"go/ast"
	"go/token"
	"go/types"
	"sort"
	"strings"

	"golang.org/x/tools/go/packages"
)

// conversionCopy: an assignment in a hand-written conversion function that puts a versioned
// field's value into an internal field of another name or place.
type conversionCopy struct {
	steps []step // the internal path, relative to the conversion's out type
	pkg   *packages.Package
	fn    *funcNode
	pos   token.Pos
}

// conversionCopies reads the Convert_<v>_<T>_To_<i>_<T>(in, out, s) functions whose in is a type of
// vpkg and out of ipkg: each out.P = f(in.Q) copies Q's value into P, through a cast or a call
// (strings.Split). The generated autoConvert copies same-named fields; configFieldList matches those by name.
func (ix *index) conversionCopies(vpkg, ipkg string) map[*types.Var]*conversionCopy {
	out := map[*types.Var]*conversionCopy{}
	pkgOf := func(t types.Type) string {
		if n, ok := types.Unalias(deref(t)).(*types.Named); ok && n.Obj().Pkg() != nil {
			return n.Obj().Pkg().Path()
		}
		return ""
	}
	for _, obj := range sortedFuncs(ix.funcs) {
		fn := ix.funcs[obj]
		sig := obj.Type().(*types.Signature)
		if fn.decl == nil || fn.decl.Body == nil || !strings.HasPrefix(obj.Name(), "Convert_") || sig.Params().Len() < 2 ||
			pkgOf(sig.Params().At(0).Type()) != vpkg || pkgOf(sig.Params().At(1).Type()) != ipkg {
			continue
		}
		info := fn.pkg.TypesInfo
		in, dst := sig.Params().At(0), sig.Params().At(1)
		ast.Inspect(fn.decl.Body, func(n ast.Node) bool {
			as, ok := n.(*ast.AssignStmt)
			if !ok || len(as.Lhs) != len(as.Rhs) {
				return true
			}
			for i, l := range as.Lhs {
				lsteps, lbase := chainOf(info, l)
				if len(lsteps) == 0 || baseVar(info, lbase) != dst {
					continue
				}
				ast.Inspect(as.Rhs[i], func(n ast.Node) bool {
					e, ok := n.(ast.Expr)
					if !ok {
						return true
					}
					rsteps, rbase := chainOf(info, e)
					if len(rsteps) == 0 {
						return true
					}
					if baseVar(info, rbase) == in {
						v := rsteps[len(rsteps)-1].v
						if out[v] == nil {
							out[v] = &conversionCopy{steps: lsteps, pkg: fn.pkg, fn: fn, pos: l.Pos()}
						}
					}
					return false
				})
			}
			return true
		})
	}
	return out
}

// sortedFuncs orders functions by position, so that the first copy found is the same every run.
func sortedFuncs(m map[*types.Func]*funcNode) []*types.Func {
	fs := make([]*types.Func, 0, len(m))
	for f := range m {
		fs = append(fs, f)
	}
	sort.Slice(fs, func(i, j int) bool {
		if fs[i].Pos() != fs[j].Pos() {
			return fs[i].Pos() < fs[j].Pos()
		}
		return fs[i].FullName() < fs[j].FullName()
	})
	return fs
}
