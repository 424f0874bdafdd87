// Conditional reads (issue 25): a read inside a branch whose condition tests another flag's value
// for a non-default value (`if cfg.ClientAutoTLS`, `case cfg.Durl != ""`, after an early
// `if !cfg.PeerAutoTLS { return nil }`, the right side of `cfg.Durl != "" && …`), or in a function
// that runs only from such branches, runs only when the unit passes that other flag. Such a read
// ranks after the reads every run takes, so that the cited first read is on the path every run takes.
// A read in a branch on anything else (guarded: `if info.EmptyCN`, after etcd's
// `if defaultHostname == "" { return }`) ranks after an unguarded one only where nothing else
// decides (rank.go), and a plumbing copy is explained by an unguarded read downstream first.
// Early returns a healthy start passes (an error check or a nil parameter, a block that returns
// an error) neither guard nor condition anything.

package main

import (
	"go/ast"
	"go/token"
	"go/types"
	"strconv"

	"golang.org/x/tools/go/ast/astutil"
	"golang.org/x/tools/go/packages"
)

// Condition is what a conditional read depends on: the flags whose fields the condition tests,
// and the condition's line. Caller is set when the read's function runs only from a call inside
// that branch: the call's function.
// Text is the condition's every line (a multi-line `a &&\n b` whole); Expr the Go expression the
// branch tests (a case's list joined by ||), which the read needs true, or false when Negated (past
// its early return, in its else, right of its ||); Tests, each operand of Expr read from a flag's
// field, with that flag (whatever the value it needs), so that prove can decide Expr on the unit's
// values. Expr is left out when the read's function has callers under different conditions.
type Condition struct {
	Flags   []string            `json:"flags"`
	At      string              `json:"at"` // module@version/file:line of the if, case or && operand
	Text    string              `json:"text"`
	Caller  string              `json:"caller,omitempty"`
	Expr    string              `json:"expr,omitempty"`
	Negated bool                `json:"negated,omitempty"`
	Tests   map[string][]string `json:"tests,omitempty"`
}

// condTest is one branch around a position: its condition, the flags it requires to be set
// (non-default; none for a guard on anything else), and the flags it reads at all.
type condTest struct {
	flags    clauses
	mentions map[int]bool
	pos      token.Pos
	end      token.Pos // where the condition's text ends: the expression's end, a case's colon
	expr     ast.Expr  // nil for a case of a tagged switch or a select
	negated  bool
	pkg      *packages.Package
	fn       *funcNode // the function the condition is in (nil in a package variable's initializer)
	// init: the if's init statement runs on the condition's line before it (`if v := f(); v > 0`),
	// so the operands are not yet what the condition tests when a tracepoint there stops.
	init bool
}

// funcConds: how a function is reached. guarded: every reference to it in the code the process
// runs is inside a branch (or in a guarded caller); cond: the first reference's condition on a
// flag, when every reference has one.
type funcConds struct {
	guarded bool
	cond    *condTest
	mixed   bool // the references' conditions differ: cond is only the first
}

// conds holds what the condition analysis of one component needs and has found.
type conds struct {
	a       *analysis
	flagOf  map[ast.Expr]map[int]bool // condition operands attributed to a flag (direct reads and copies)
	callers map[*types.Func][]*funcNode
	ifaces  map[string]bool // names of interface methods the process calls: such a method has callers we cannot see
	byFunc  map[*funcNode]funcConds
	busy    map[*funcNode]bool
}

func newConds(a *analysis, attributedLists ...[]attributed) *conds {
	c := &conds{a: a, flagOf: map[ast.Expr]map[int]bool{}, callers: map[*types.Func][]*funcNode{}, ifaces: map[string]bool{},
		byFunc: map[*funcNode]funcConds{}, busy: map[*funcNode]bool{}}
	for _, list := range attributedLists {
		for _, r := range list {
			if r.o == nil || r.tier > 1 {
				continue
			}
			if c.flagOf[r.o.expr] == nil {
				c.flagOf[r.o.expr] = map[int]bool{}
			}
			c.flagOf[r.o.expr][r.b.flag] = true
		}
	}
	for n := range a.runs {
		for _, f := range n.refs {
			c.callers[f] = append(c.callers[f], n)
			if sig, ok := f.Type().(*types.Signature); ok && sig.Recv() != nil && types.IsInterface(sig.Recv().Type()) {
				c.ifaces[f.Name()] = true
			}
		}
	}
	return c
}

// of: the condition on another flag that a read of `flag` at o needs (nil when none), and whether
// the read is guarded at all: inside a branch that does not test the flag itself, or in a
// function every caller reaches only through one. A guarded read may be skipped by a run; an
// unguarded one runs whenever its function does.
func (c *conds) of(o *occ, flag int) (*Condition, bool) {
	if o == nil || o.fn == nil {
		return nil, false
	}
	guarded := false
	for _, t := range c.around(o.pkg, o.expr.Pos(), o.expr.End()) {
		if needs := t.flags.needs(flag); len(needs) > 0 {
			return c.describe(t, needs, false, true), true
		}
		guarded = guarded || !t.mentions[flag]
	}
	fc := c.ofFunc(o.fn)
	if fc.cond != nil {
		if needs := fc.cond.flags.needs(flag); len(needs) > 0 {
			return c.describe(*fc.cond, needs, true, !fc.mixed), true
		}
	}
	return nil, guarded || fc.guarded
}

// describe: the condition t as the map records it; caller: t is in the function that calls the
// read's; decidable: whether prove may decide it (Expr).
func (c *conds) describe(t condTest, needs []int, caller, decidable bool) *Condition {
	var names []string
	for _, f := range needs {
		names = append(names, c.a.names[f])
	}
	site, err := c.a.ix.site(t.pkg, t.fn, t.pos)
	if err != nil {
		return nil
	}
	cd := &Condition{Flags: names, At: site.Module + "@" + site.Version + "/" + site.File + ":" + strconv.Itoa(site.Line), Text: c.a.ix.lineText(t.pos, t.end)}
	if caller && t.fn != nil {
		cd.Caller = t.fn.name
	}
	if decidable && t.expr != nil {
		cd.Expr, cd.Negated, cd.Tests = c.a.ix.exprText(t.expr), t.negated, c.tests(t.expr)
	}
	return cd
}

// ofFunc: how fn is reached, from every reference to it in the code the process runs (directly
// in a branch, or in a caller that is itself reached only through one). A method that an
// interface call may reach has callers we cannot see, and a function with no caller in the load
// is an entry point: both unguarded.
func (c *conds) ofFunc(fn *funcNode) funcConds {
	if fc, ok := c.byFunc[fn]; ok {
		return fc
	}
	if c.busy[fn] || fn.obj == nil {
		return funcConds{}
	}
	if sig := fn.obj.Type().(*types.Signature); sig.Recv() != nil && c.ifaces[fn.obj.Name()] {
		c.byFunc[fn] = funcConds{}
		return funcConds{}
	}
	c.busy[fn] = true
	fc := c.reached(fn)
	c.busy[fn] = false
	c.byFunc[fn] = fc
	return fc
}

func (c *conds) reached(fn *funcNode) funcConds {
	callers := c.callers[fn.obj]
	if len(callers) == 0 {
		return funcConds{}
	}
	out := funcConds{guarded: true}
	allFlag := true
	for _, caller := range callers {
		if caller.decl == nil || caller == fn {
			return funcConds{} // a package variable's initializer, or recursion: no branch to read
		}
		unguarded := false
		ast.Inspect(caller.decl.Body, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if unguarded || !ok {
				return !unguarded
			}
			if f, _ := caller.pkg.TypesInfo.Uses[id].(*types.Func); f == nil || f.Origin() != fn.obj {
				return true
			}
			ts := c.around(caller.pkg, id.Pos(), id.End())
			var cond *condTest
			for k := range ts {
				if len(ts[k].flags) > 0 {
					cond = &ts[k]
					break
				}
			}
			if cond == nil {
				up := c.ofFunc(caller)
				cond, out.mixed = up.cond, out.mixed || up.mixed
			}
			// Guards count one call deep: the code every run takes sits in branches too further
			// up (etcd's startEtcd runs in a switch on the data directory's kind).
			if len(ts) == 0 && cond == nil {
				unguarded = true
				return false
			}
			if cond == nil {
				allFlag = false
			} else if out.cond == nil {
				out.cond = cond
			} else if out.cond.pos != cond.pos {
				out.mixed = true
			}
			return true
		})
		if unguarded {
			return funcConds{}
		}
	}
	if !allFlag {
		out.cond = nil
	}
	return out
}

// around lists the branches that must be taken for the code at [pos, end) to run, innermost
// first: enclosing if, case and select branches, the left operands of && (and the negated ones
// of ||), and the early returns before it in each enclosing block, except those a healthy start
// passes (an error check, a nil parameter).
func (c *conds) around(pkg *packages.Package, pos, end token.Pos) []condTest {
	info := pkg.TypesInfo
	var file *ast.File
	for _, f := range pkg.Syntax {
		if f.Pos() <= pos && end <= f.End() {
			file = f
			break
		}
	}
	if file == nil {
		return nil
	}
	path, _ := astutil.PathEnclosingInterval(file, pos, end)
	var out []condTest
	add := func(e ast.Expr, sense bool, at, end token.Pos) {
		t := condTest{mentions: c.mentions(e), pos: at, end: end, expr: e, negated: !sense, pkg: pkg}
		if e != nil {
			t.flags = c.requires(info, e, sense)
		}
		out = append(out, t)
	}
	for i := 1; i < len(path); i++ {
		child := path[i-1]
		switch n := path[i].(type) {
		case *ast.FuncDecl:
			obj, _ := info.Defs[n.Name].(*types.Func)
			for j := range out {
				out[j].fn = c.a.ix.funcs[obj]
			}
			return out
		case *ast.IfStmt:
			if child == n.Body {
				add(n.Cond, true, n.Cond.Pos(), n.Cond.End())
				out[len(out)-1].init = n.Init != nil
			} else if child == n.Else {
				add(n.Cond, false, n.Cond.Pos(), n.Cond.End())
				out[len(out)-1].init = n.Init != nil
			} else if child == n.Cond && n.Init != nil {
				for j := range out {
					if out[j].pos >= n.Cond.Pos() && out[j].pos < n.Cond.End() {
						out[j].init = true // an operand of this condition
					}
				}
			}
		case *ast.CaseClause:
			if _, inBody := child.(ast.Stmt); !inBody {
				break
			}
			if sw, ok := path[i+2].(*ast.SwitchStmt); ok && sw.Tag == nil && len(n.List) > 0 {
				add(disjunction(n.List), true, n.Pos(), n.Colon)
			} else {
				add(nil, true, n.Pos(), n.Colon)
			}
		case *ast.CommClause:
			if _, inBody := child.(ast.Stmt); inBody {
				add(nil, true, n.Pos(), n.Colon)
			}
		case *ast.BinaryExpr:
			if child == n.Y && n.Op == token.LAND {
				add(n.X, true, n.X.Pos(), n.X.End())
			} else if child == n.Y && n.Op == token.LOR {
				add(n.X, false, n.X.Pos(), n.X.End())
			}
		case *ast.BlockStmt:
			for _, s := range n.List {
				if s == child {
					break
				}
				if is, ok := s.(*ast.IfStmt); ok && is.Else == nil && terminates(is.Body) && !c.a.ix.healthy(info, is.Cond) && !failure(info, is.Body) {
					add(is.Cond, false, is.Cond.Pos(), is.Cond.End())
					out[len(out)-1].init = is.Init != nil
				}
			}
		}
	}
	return out
}
