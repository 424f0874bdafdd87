package main

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"sort"
	"strings"

	"golang.org/x/tools/go/packages"
	"golang.org/x/tools/go/types/typeutil"
)

// funcNode is one declared function (or a package's variable initializers) with the functions
// its body refers to. Function literals belong to the declaration they appear in.
type funcNode struct {
	obj  *types.Func // nil for a package's initializers
	pkg  *packages.Package
	decl *ast.FuncDecl
	name string
	refs []*types.Func
	// makes: the named types whose values the body converts to an interface (rta.go), for interface dispatch.
	makes []*types.TypeName
}

// occ is one occurrence of a variable or field in an expression.
type occ struct {
	pkg    *packages.Package
	fn     *funcNode
	expr   ast.Expr   // *ast.SelectorExpr for fields, *ast.Ident for variables
	write  bool       // left-hand side of = or :=, or ++/--
	flowTo ast.Expr   // the expression this occurrence is assigned to (lhs, or a composite-literal key)
	flowIn types.Type // for a composite-literal key: the literal's struct type
	// The occurrence is only the operand of a further field selection (x.F.G): it is not a read of
	// x.F as a whole.
	selected bool
	addr     bool // &x.F: handed out as a pointer (may be written through)
	// The nearest call around the occurrence takes it as an argument: logged is a log or fmt
	// call (zap.String("name", x), klog.InfoS), arg any other call (not len or cap).
	logged, arg bool
	// cond: the occurrence is in an if or switch condition: it checks the value rather than uses it.
	cond bool
	// ranged: the occurrence is what a for-range statement iterates over.
	ranged bool
	// subsumed: no read site of its own (subsumed.go): it only formats the message of a check on
	// the same expression, or lies after a return taken whenever the expression is non-empty.
	subsumed bool
	// message: the read only makes a message (msgonly.go); msg is the candidate until
	// settleMessages decides.
	message bool
	msg     *msgCand
}

// noSite: the occurrence is no read site of its own.
func (o *occ) noSite() bool { return o.write || o.subsumed || o.message }

// call is one call expression in interesting code.
type call struct {
	pkg  *packages.Package
	fn   *funcNode
	expr *ast.CallExpr
	// For calls that are the whole right-hand side of an assignment (x = f(...)), the assigned expression.
	flowTo ast.Expr
}

type index struct {
	prog       *program
	funcs      map[*types.Func]*funcNode
	inits      map[string]*funcNode
	methods    map[string][]*types.Func // concrete methods by name, for interface dispatch
	fieldOccs  map[*types.Var][]*occ
	varOccs    map[*types.Var][]*occ
	calls      []*call
	chaCache   map[*types.Func][]*types.Func
	lines      map[string][]string
	fileOfPkg  map[string]*packages.Package
	regRanges  []posRange // every registration call, so that default-value arguments are not reads
	regsSorted bool
	// params holds the parameters and receivers of every indexed function: binding a flag to one
	// of those would only describe the registering function itself. Filled while indexing, read by
	// pathOf.
	params map[*types.Var]bool
	// regs is every flag registration with a constant name (findRegistrations). The components
	// of one load share it: each keeps those it can reach.
	regs []*reg
	// presenterCalls and pureMemo serve msgonly.go and pure.go.
	presenterCalls []presenterCall
	pureMemo       map[*types.Func]bool
}

type posRange struct{ start, end token.Pos }

// buildIndex indexes one load's code and finds its flag registrations. main builds it once per
// load and passes it to analyze for each component of that load.
func buildIndex(prog *program) *index {
	ix := &index{
		prog:      prog,
		funcs:     map[*types.Func]*funcNode{},
		inits:     map[string]*funcNode{},
		methods:   map[string][]*types.Func{},
		fieldOccs: map[*types.Var][]*occ{},
		varOccs:   map[*types.Var][]*occ{},
		chaCache:  map[*types.Func][]*types.Func{},
		lines:     map[string][]string{},
		fileOfPkg: map[string]*packages.Package{},
		params:    map[*types.Var]bool{},
		pureMemo:  map[*types.Func]bool{},
	}
	paths := make([]string, 0, len(prog.byPath))
	for p := range prog.byPath {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, path := range paths {
		p := prog.byPath[path]
		if p.TypesInfo == nil {
			continue
		}
		for i, f := range p.Syntax {
			name := prog.fset.File(f.Pos()).Name()
			if i < len(p.CompiledGoFiles) {
				name = p.CompiledGoFiles[i]
			}
			if !interesting(name) {
				continue
			}
			ix.fileOfPkg[name] = p
			ix.indexFile(p, f)
		}
	}
	ix.settleMessages()
	// After every file: pathOf, which findRegistrations uses, needs all of ix.params.
	ix.regs = ix.findRegistrations()
	return ix
}

func funcDisplayName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	star := ""
	if s, ok := t.(*ast.StarExpr); ok {
		star = "*"
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		if star != "" {
			return "(*" + id.Name + ")." + fd.Name.Name
		}
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

func (ix *index) indexFile(p *packages.Package, f *ast.File) {
	init := ix.inits[p.PkgPath]
	if init == nil {
		init = &funcNode{pkg: p, name: "(package initialization)"}
		ix.inits[p.PkgPath] = init
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			obj, _ := p.TypesInfo.Defs[d.Name].(*types.Func)
			if obj == nil {
				continue
			}
			n := &funcNode{obj: obj, pkg: p, decl: d, name: funcDisplayName(d)}
			sig := obj.Type().(*types.Signature)
			if sig.Recv() != nil {
				ix.params[sig.Recv()] = true
			}
			for i := 0; i < sig.Params().Len(); i++ {
				ix.params[sig.Params().At(i)] = true
			}
			ix.funcs[obj] = n
			if sig := obj.Type().(*types.Signature); sig.Recv() != nil {
				if _, isIface := sig.Recv().Type().Underlying().(*types.Interface); !isIface {
					ix.methods[obj.Name()] = append(ix.methods[obj.Name()], obj)
				}
			}
			if d.Body != nil {
				ix.walk(p, n, d.Body)
			}
			if d.Name.Name == "init" && d.Recv == nil {
				init.refs = append(init.refs, obj)
			}
		case *ast.GenDecl:
			if d.Tok == token.VAR {
				for _, spec := range d.Specs {
					vs := spec.(*ast.ValueSpec)
					var names []string
					for _, n := range vs.Names {
						names = append(names, n.Name)
					}
					n := &funcNode{pkg: p, name: "var " + strings.Join(names, ", ")}
					ix.walk(p, n, vs)
					init.refs = append(init.refs, n.refs...)
					init.makes = append(init.makes, n.makes...)
				}
			}
		}
	}
}

func (ix *index) walk(p *packages.Package, fn *funcNode, root ast.Node) {
	info := p.TypesInfo
	var stack []ast.Node
	ast.Inspect(root, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		var parent ast.Node
		if len(stack) > 0 {
			parent = stack[len(stack)-1]
		}
		stack = append(stack, n)
		noteConverted(info, fn, n, stack[:len(stack)-1])
		switch n := n.(type) {
		case *ast.Ident:
			switch obj := info.Uses[n].(type) {
			case *types.Func:
				fn.refs = append(fn.refs, obj.Origin())
				if isPresenter(obj) && !(fn.obj != nil && fn.obj.Origin() == obj.Origin()) {
					ix.notePresenterUse(info, obj, n, stack)
				}
			case *types.Var:
				if obj.IsField() {
					return true
				}
				var e ast.Expr = n
				par, st := parent, stack
				if sel, ok := parent.(*ast.SelectorExpr); ok && sel.Sel == n {
					if info.Selections[sel] != nil {
						return true // a field's selector ident is handled with its SelectorExpr
					}
					// A qualified identifier (pkg.Var): the occurrence is the whole selector.
					e, st = sel, stack[:len(stack)-1]
					par = nil
					if len(st) >= 2 {
						par = st[len(st)-2]
					}
				}
				o := ix.newOcc(p, fn, e, par, st)
				ix.varOccs[obj.Origin()] = append(ix.varOccs[obj.Origin()], o)
			}
		case *ast.SelectorExpr:
			sel := info.Selections[n]
			if sel == nil || sel.Kind() != types.FieldVal {
				return true
			}
			fields := selectionFields(sel)
			if len(fields) == 0 {
				return true
			}
			o := ix.newOcc(p, fn, n, parent, stack)
			last := fields[len(fields)-1].v
			ix.fieldOccs[last] = append(ix.fieldOccs[last], o)
		case *ast.FuncLit:
			if tv, ok := info.Types[n]; ok {
				if sig, ok := tv.Type.(*types.Signature); ok {
					for i := 0; i < sig.Params().Len(); i++ {
						ix.params[sig.Params().At(i)] = true
					}
				}
			}
		case *ast.CallExpr:
			c := &call{pkg: p, fn: fn, expr: n}
			if as, ok := parent.(*ast.AssignStmt); ok && len(as.Lhs) == len(as.Rhs) {
				for i, r := range as.Rhs {
					if r == n {
						c.flowTo = as.Lhs[i]
					}
				}
			}
			if vs, ok := parent.(*ast.ValueSpec); ok && len(vs.Names) == len(vs.Values) {
				for i, r := range vs.Values {
					if r == n {
						c.flowTo = vs.Names[i]
					}
				}
			}
			ix.calls = append(ix.calls, c)
		}
		return true
	})
}

// isLogCall: the call prints its arguments for people (zap fields, klog.InfoS, fmt.Sprintf).
func isLogCall(f *types.Func) bool {
	if f.Pkg() == nil {
		return false
	}
	switch f.Pkg().Path() {
	case "go.uber.org/zap", "fmt", "log":
		return true
	case "k8s.io/klog/v2":
		for _, p := range []string{"Info", "Warning", "Error", "Fatal", "Exit"} {
			if strings.HasPrefix(f.Name(), p) {
				return true
			}
		}
	}
	return false
}

func inCondition(e ast.Expr, stack []ast.Node) bool {
	return outward(e, stack, func(n, child ast.Node) (bool, bool) {
		switch n := n.(type) {
		case *ast.IfStmt:
			return true, n.Cond == child
		case *ast.SwitchStmt:
			return true, n.Tag == child
		case ast.Stmt, *ast.FuncLit:
			return true, false
		}
		return false, false
	})
}

// outward visits the nodes around e from the innermost out, each with the child it was reached
// from, until visit says it is done; its answer then (false when it never is).
func outward(e ast.Expr, stack []ast.Node, visit func(n, child ast.Node) (done, answer bool)) bool {
	child := ast.Node(e)
	for i := len(stack) - 1; i >= 0; i-- {
		n := stack[i]
		if n == e {
			continue
		}
		if done, answer := visit(n, child); done {
			return answer
		}
		child = n
	}
	return false
}

// callContext reports how the calls around e (within its statement) use it: logged when any of
// them prints it, arg when the nearest real call (not a conversion, len or cap) takes it.
func callContext(info *types.Info, e ast.Expr, stack []ast.Node) (logged, arg bool) {
	child := ast.Node(e)
	nearest := true
	for i := len(stack) - 1; i >= 0; i-- {
		n := stack[i]
		if n == e {
			continue
		}
		switch n := n.(type) {
		case ast.Stmt, *ast.FuncLit:
			return logged, arg
		case *ast.CallExpr:
			if n.Fun == child {
				return logged, arg
			}
			if tv, ok := info.Types[n.Fun]; ok && tv.IsType() {
				break // a conversion: look further out
			}
			switch f := typeutil.Callee(info, n).(type) {
			case *types.Builtin:
				if nearest && (f.Name() == "len" || f.Name() == "cap") {
					nearest = false
				}
			case *types.Func:
				if isLogCall(f) {
					return true, false
				}
			}
			if nearest {
				arg, nearest = true, false
			}
		}
		child = n
	}
	return logged, arg
}

func (ix *index) newOcc(p *packages.Package, fn *funcNode, e ast.Expr, parent ast.Node, stack []ast.Node) *occ {
	o := &occ{pkg: p, fn: fn, expr: e}
	if se, ok := parent.(*ast.SelectorExpr); ok && se.X == e {
		if sel := p.TypesInfo.Selections[se]; sel != nil && sel.Kind() == types.FieldVal {
			o.selected = true
		}
	}
	if u, ok := parent.(*ast.UnaryExpr); ok && u.Op == token.AND {
		o.addr = true
	}
	o.logged, o.arg = callContext(p.TypesInfo, e, stack)
	o.cond = inCondition(e, stack)
	o.subsumed = (o.logged && messageOfCheck(e, stack)) || afterNonEmptyReturn(e, stack)
	o.msg = messageCandidate(p.TypesInfo, fn, e, stack)
	if r, ok := parent.(*ast.RangeStmt); ok && r.X == e {
		o.ranged = true
	}
	switch par := parent.(type) {
	case *ast.AssignStmt:
		for i, l := range par.Lhs {
			if l == e && (par.Tok == token.ASSIGN || par.Tok == token.DEFINE) {
				o.write = true
			}
			_ = i
		}
		if !o.write && len(par.Lhs) == len(par.Rhs) {
			for i, r := range par.Rhs {
				if r == e {
					o.flowTo = par.Lhs[i]
				}
			}
		}
	case *ast.IncDecStmt:
		o.write = true
	case *ast.KeyValueExpr:
		if par.Value == e && len(stack) >= 3 {
			if cl, ok := stack[len(stack)-3].(*ast.CompositeLit); ok {
				if tv, ok := p.TypesInfo.Types[cl]; ok && tv.Type != nil {
					t := tv.Type
					if pt, ok := t.Underlying().(*types.Pointer); ok {
						t = pt.Elem()
					}
					if _, ok := t.Underlying().(*types.Struct); ok {
						o.flowTo = par.Key
						o.flowIn = t
					}
				}
			}
		}
	}
	return o
}

// step is one field in an access path, with the struct type it was selected from.
type step struct {
	v     *types.Var
	owner types.Type // the (possibly named) struct type holding v
}

// selectionFields lists the fields a field selection walks through, including implicit embedded
// fields, outermost first.
func selectionFields(sel *types.Selection) []step {
	t := sel.Recv()
	var out []step
	for _, i := range sel.Index() {
		owner := t
		if p, ok := t.Underlying().(*types.Pointer); ok {
			owner = p.Elem()
		}
		st, ok := owner.Underlying().(*types.Struct)
		if !ok || i >= st.NumFields() {
			return nil
		}
		f := st.Field(i)
		out = append(out, step{v: f.Origin(), owner: owner})
		t = f.Type()
	}
	return out
}

// chainOf returns the field path an expression selects, outermost first, and the expression the
// chain starts from (a variable, a call, an index expression...).
func chainOf(info *types.Info, e ast.Expr) ([]step, ast.Expr) {
	var rev [][]step
	for {
		e = ast.Unparen(e)
		se, ok := e.(*ast.SelectorExpr)
		if !ok {
			break
		}
		sel := info.Selections[se]
		if sel == nil || sel.Kind() != types.FieldVal {
			break
		}
		fs := selectionFields(sel)
		if fs == nil {
			break
		}
		rev = append(rev, fs)
		e = se.X
	}
	var out []step
	for i := len(rev) - 1; i >= 0; i-- {
		out = append(out, rev[i]...)
	}
	return out, e
}

// implementations resolves a call through an interface method to the concrete methods of the
// loaded Kubernetes/etcd types that implement the interface (class hierarchy analysis).
func (ix *index) implementations(m *types.Func) []*types.Func {
	if r, ok := ix.chaCache[m]; ok {
		return r
	}
	var out []*types.Func
	sig := m.Type().(*types.Signature)
	var iface *types.Interface
	if sig.Recv() != nil {
		iface, _ = sig.Recv().Type().Underlying().(*types.Interface)
	}
	if iface != nil {
		for _, c := range ix.methods[m.Name()] {
			recv := c.Type().(*types.Signature).Recv().Type()
			base := recv
			if p, ok := recv.(*types.Pointer); ok {
				base = p.Elem()
			}
			if types.Implements(base, iface) || types.Implements(types.NewPointer(base), iface) {
				out = append(out, c)
			}
		}
	}
	ix.chaCache[m] = out
	return out
}

func constString(info *types.Info, e ast.Expr) (string, bool) {
	tv, ok := info.Types[e]
	if !ok || tv.Value == nil || tv.Value.Kind() != constant.String {
		return "", false
	}
	return constant.StringVal(tv.Value), true
}

func calleeOf(info *types.Info, c *ast.CallExpr) *types.Func {
	f, _ := typeutil.Callee(info, c).(*types.Func)
	if f == nil {
		return nil
	}
	return f.Origin()
}

func isFlagPkg(path string) bool { return path == "flag" || path == "github.com/spf13/pflag" }

func isFlagSetPtr(t types.Type) bool {
	p, ok := t.(*types.Pointer)
	if !ok {
		return false
	}
	n, ok := p.Elem().(*types.Named)
	return ok && n.Obj().Pkg() != nil && isFlagPkg(n.Obj().Pkg().Path()) && n.Obj().Name() == "FlagSet"
}

func paramIndex(sig *types.Signature, name string) int {
	for i := 0; i < sig.Params().Len(); i++ {
		if sig.Params().At(i).Name() == name {
			return i
		}
	}
	return -1
}

func typeShort(t types.Type) string {
	return types.TypeString(t, func(p *types.Package) string { return p.Name() })
}

func ownerName(t types.Type) string {
	if n, ok := t.(*types.Named); ok {
		if n.Obj().Pkg() != nil {
			return n.Obj().Pkg().Name() + "." + n.Obj().Name()
		}
		return n.Obj().Name()
	}
	if a, ok := t.(*types.Alias); ok {
		return ownerName(types.Unalias(a))
	}
	return "struct"
}

func stepsEqualSuffix(p, c []step) int {
	m := 0
	for m < len(p) && m < len(c) && p[len(p)-1-m].v == c[len(c)-1-m].v {
		m++
	}
	return m
}

func joinSteps(s []step) string {
	var b strings.Builder
	for _, x := range s {
		b.WriteString(".")
		b.WriteString(x.v.Name())
	}
	return b.String()
}
