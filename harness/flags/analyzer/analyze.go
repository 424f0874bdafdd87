package main

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"golang.org/x/tools/go/packages"
)

// Site is a citation: a line in a module at its pinned version.
type Site struct {
	Module   string `json:"module"`
	Version  string `json:"version"`
	File     string `json:"file"`
	Line     int    `json:"line"`
	Col      int    `json:"col"`
	URL      string `json:"url"`
	Package  string `json:"package"`
	Function string `json:"function,omitempty"`
	Excerpt  string `json:"excerpt"`
}

type ConstRef struct {
	Ident string `json:"ident"`
	Site
}

type Registration struct {
	Site
	Call       string    `json:"call"`                 // the registering function, e.g. pflag.(*FlagSet).StringSliceVar
	Via        string    `json:"via,omitempty"`        // helper that forwards the name to Call
	CalledFrom *Site     `json:"calledFrom,omitempty"` // for a helper: the call that passes the name
	NameArg    string    `json:"nameArg,omitempty"`    // for a helper: the constant passed at CalledFrom
	NameFormat string    `json:"nameFormat,omitempty"` // for a helper: fmt.Sprintf(NameFormat, NameArg) is the name
	NameConst  *ConstRef `json:"nameConst,omitempty"`  // when the name (or NameArg) is a named constant, where its literal is
}

type Read struct {
	Site
	Selector string `json:"selector"`         // what the cited line contains: ".Field", a variable name, or a "flag-name" literal
	Kind     string `json:"kind"`             // consumer | app | apply | options | validation | generated | lookup
	Match    int    `json:"match"`            // how many trailing fields of the bound path this read's selector spells out
	Via      string `json:"via,omitempty"`    // for reads of a value copied out of the flag's field: where it was copied to
	Hop      int    `json:"hop,omitempty"`    // for such reads: how many copies away from the registered object (1..3)
	CopyTo   string `json:"copyTo,omitempty"` // the read only copies the value into this field or variable
	// Set when the read runs only if another flag has a non-default value (cond.go).
	Condition *Condition `json:"condition,omitempty"`
	// Every branch the read needs in its own function, for prove to evaluate live (guards.go).
	Guards []Guard `json:"guards,omitempty"`
}

type FlagOut struct {
	Name              string         `json:"name"`
	Shorthand         string         `json:"shorthand,omitempty"`
	Type              string         `json:"type"`
	Default           string         `json:"default"`
	DefaultNote       string         `json:"defaultNote,omitempty"`
	Help              string         `json:"help"`
	Deprecated        bool           `json:"deprecated"`
	DeprecatedMessage string         `json:"deprecatedMessage,omitempty"`
	Hidden            bool           `json:"hidden"`
	Field             string         `json:"field"`
	Path              string         `json:"path"`
	Binding           string         `json:"binding"` // field | variable | value | lookup | none
	RegisteredAt      *Registration  `json:"registeredAt"`
	AlsoRegisteredAt  []Registration `json:"alsoRegisteredAt,omitempty"`
	ReadBy            string         `json:"readBy"` // read | validation-only | copy-only | none
	ConsumedTotal     int            `json:"consumedTotal"`
	ConsumedAt        []Read         `json:"consumedAt"`
	SharedReadsTotal  int            `json:"sharedReadsTotal,omitempty"`
}

type Coverage struct {
	Flags          int `json:"flags"`
	Registered     int `json:"registered"`
	WithRead       int `json:"withRead"`
	ValidationOnly int `json:"validationOnly"`
	CopyOnly       int `json:"copyOnly"`
	NeverRead      int `json:"neverRead"`
	Unregistered   int `json:"unregistered"`
}

func (c Coverage) String() string {
	return fmt.Sprintf("registered %d, read %d, validation-only %d, copy-only %d, never read %d, no registration %d",
		c.Registered, c.WithRead, c.ValidationOnly, c.CopyOnly, c.NeverRead, c.Unregistered)
}

type Doc struct {
	Component         string    `json:"component"`
	KubernetesVersion string    `json:"kubernetesVersion,omitempty"` // empty in an etcd-only map (data/etcd/<version>.json)
	ComponentVersion  string    `json:"componentVersion"`
	Root              string    `json:"root"`
	Method            string    `json:"method"`
	Coverage          Coverage  `json:"coverage"`
	Flags             []FlagOut `json:"flags"`
	Gaps              []string  `json:"gaps"`
	// The config file's fields (config.go), for a component with one.
	Config *ConfigDoc `json:"config,omitempty"`
}

// reg is one registration found in source.
type reg struct {
	name     string
	call     *call
	callee   *types.Func
	via      string
	bound    ast.Expr // pointer or flag.Value argument (nil for fs.String-style, see flowTo)
	boundPkg *packages.Package
	usage    string
	hasUsage bool
	defExpr  ast.Expr
	nameArg  ast.Expr
	// For helpers registering fields of their receiver (AuditBatchOptions.AddFlags), the fields
	// leading to that receiver at the call site.
	prefix        []step
	prefixRoot    *types.Var
	boundIsResult bool   // bound is where the helper's returned pointer is stored (pathOf, not resolveBound)
	inner         *call  // the pflag/flag call itself (== call unless registered through a helper)
	nameValue     string // the constant passed at a helper's call site
	format        string // the helper builds the name with fmt.Sprintf(format, nameValue)
}

func recvExpr(c *ast.CallExpr) ast.Expr {
	if se, ok := ast.Unparen(c.Fun).(*ast.SelectorExpr); ok {
		return se.X
	}
	return nil
}

// wrapper is a function that forwards one of its parameters as the name of a registration.
type wrapper struct {
	nameParam  int
	format     string // the name is fmt.Sprintf(format, <nameParam>)
	boundParam int    // -1 when the bound object is fixed inside the wrapper
	recvBound  bool   // the bound object is reached from the wrapper's receiver
	inner      *reg
}

// nameFormat recognises fmt.Sprintf("audit-%s-mode", pluginName) with pluginName a parameter.
func nameFormat(info *types.Info, e ast.Expr) (string, ast.Expr, bool) {
	ce, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok || len(ce.Args) != 2 {
		return "", nil, false
	}
	f := calleeOf(info, ce)
	if f == nil || f.Pkg() == nil || f.Pkg().Path() != "fmt" || f.Name() != "Sprintf" {
		return "", nil, false
	}
	format, ok := constString(info, ce.Args[0])
	if !ok || strings.Count(format, "%") != 1 || !strings.Contains(format, "%s") {
		return "", nil, false
	}
	return format, ce.Args[1], true
}

func boundFromReceiver(fn *funcNode, bound ast.Expr) bool {
	if fn.obj == nil || bound == nil {
		return false
	}
	sig := fn.obj.Type().(*types.Signature)
	if sig.Recv() == nil {
		return false
	}
	b := ast.Unparen(bound)
	if u, ok := b.(*ast.UnaryExpr); ok && u.Op == token.AND {
		b = u.X
	}
	_, base := chainOf(fn.pkg.TypesInfo, b)
	id, ok := ast.Unparen(base).(*ast.Ident)
	return ok && fn.pkg.TypesInfo.Uses[id] == sig.Recv()
}

var reRegName = regexp.MustCompile(`^(Var|VarP|VarPF|\w+Var|\w+VarP)$`)

// isRegistration: a pflag/flag function with name and usage parameters, or a method of an
// interface that mirrors them (component-base/logs registers through its own flagSet interface).
func isRegistration(f *types.Func) bool {
	if f.Pkg() == nil {
		return false
	}
	sig := f.Type().(*types.Signature)
	if paramIndex(sig, "name") < 0 || paramIndex(sig, "usage") < 0 {
		return false
	}
	if isFlagPkg(f.Pkg().Path()) {
		return true
	}
	if sig.Recv() != nil && reRegName.MatchString(f.Name()) {
		_, isIface := sig.Recv().Type().Underlying().(*types.Interface)
		return isIface
	}
	return false
}

// findRegistrations returns every registration in the index whose name is a constant, including
// calls to helpers that forward a constant name to pflag/flag.
func (ix *index) findRegistrations() []*reg {
	var regs []*reg
	wrappers := map[*types.Func][]*wrapper{}
	paramOf := func(fn *funcNode, e ast.Expr) int {
		if fn.obj == nil {
			return -1
		}
		id, ok := ast.Unparen(e).(*ast.Ident)
		if !ok {
			return -1
		}
		v, _ := fn.pkg.TypesInfo.Uses[id].(*types.Var)
		sig := fn.obj.Type().(*types.Signature)
		for i := 0; i < sig.Params().Len(); i++ {
			if sig.Params().At(i) == v {
				return i
			}
		}
		return -1
	}
	for _, c := range ix.calls {
		f := calleeOf(c.pkg.TypesInfo, c.expr)
		if f == nil || !isRegistration(f) {
			continue
		}
		sig := f.Type().(*types.Signature)
		ni := paramIndex(sig, "name")
		if ni >= len(c.expr.Args) {
			continue
		}
		r := &reg{call: c, inner: c, callee: f, boundPkg: c.pkg, nameArg: c.expr.Args[ni]}
		if pi := paramIndex(sig, "p"); pi >= 0 && pi < len(c.expr.Args) {
			r.bound = c.expr.Args[pi]
			if vi := paramIndex(sig, "value"); vi >= 0 && vi < len(c.expr.Args) {
				r.defExpr = c.expr.Args[vi]
			}
		} else if vi := paramIndex(sig, "value"); vi >= 0 && vi < len(c.expr.Args) && isValueIface(sig.Params().At(vi).Type()) {
			r.bound = c.expr.Args[vi]
		} else if vi >= 0 && vi < len(c.expr.Args) {
			r.defExpr = c.expr.Args[vi]
		}
		if ui := paramIndex(sig, "usage"); ui < len(c.expr.Args) {
			r.usage, r.hasUsage = constString(c.pkg.TypesInfo, c.expr.Args[ui])
		}
		if name, ok := constString(c.pkg.TypesInfo, r.nameArg); ok {
			r.name = name
			regs = append(regs, r)
			continue
		}
		pi := paramOf(c.fn, r.nameArg)
		format := ""
		if pi < 0 {
			if f, arg, ok := nameFormat(c.pkg.TypesInfo, r.nameArg); ok {
				if pi = paramOf(c.fn, arg); pi >= 0 {
					format = f
				}
			}
		}
		if pi >= 0 {
			w := &wrapper{nameParam: pi, format: format, boundParam: -1, inner: r, recvBound: boundFromReceiver(c.fn, r.bound)}
			if r.bound != nil {
				b := ast.Unparen(r.bound)
				if u, ok := b.(*ast.UnaryExpr); ok && u.Op == token.AND {
					b = u.X
				}
				w.boundParam = paramOf(c.fn, b)
				if w.boundParam < 0 {
					w.boundParam = paramOf(c.fn, r.bound)
				}
			}
			wrappers[c.fn.obj] = append(wrappers[c.fn.obj], w)
		}
	}
	// Calls to wrappers with a constant name, to a fixpoint (helpers of helpers).
	type key struct {
		c *call
		w *wrapper
	}
	done := map[key]bool{}
	for changed := true; changed; {
		changed = false
		for _, c := range ix.calls {
			f := calleeOf(c.pkg.TypesInfo, c.expr)
			if f == nil {
				continue
			}
			ws := wrappers[f]
			if len(ws) == 0 {
				// A call through an interface (etcd's MutableFeatureGate.AddFlag): use the
				// implementation that is a wrapper, if exactly one is.
				var found [][]*wrapper
				for _, impl := range ix.implementations(f) {
					if iw := wrappers[impl]; len(iw) > 0 {
						found = append(found, iw)
					}
				}
				if len(found) == 1 {
					ws = found[0]
				}
			}
			for _, w := range ws {
				if done[key{c, w}] || w.nameParam >= len(c.expr.Args) {
					continue
				}
				done[key{c, w}] = true
				nameArg := c.expr.Args[w.nameParam]
				r := &reg{call: c, inner: w.inner.inner, callee: w.inner.callee, via: qualifiedFunc(f), nameArg: nameArg,
					usage: w.inner.usage, hasUsage: w.inner.hasUsage, defExpr: w.inner.defExpr, format: w.format}
				if w.boundParam >= 0 && w.boundParam < len(c.expr.Args) {
					r.bound, r.boundPkg = c.expr.Args[w.boundParam], c.pkg
				} else {
					r.bound, r.boundPkg, r.boundIsResult = w.inner.bound, w.inner.boundPkg, w.inner.boundIsResult
					r.prefix, r.prefixRoot = w.inner.prefix, w.inner.prefixRoot
				}
				if w.boundParam < 0 && c.flowTo != nil && !w.recvBound {
					if _, root, kind := ix.resolveBound(w.inner.boundPkg.TypesInfo, w.inner.bound, 0); kind == "variable" && !isPackageVar(root) {
						// Version(name, ...) returns the pointer it registered: bind to where it is stored.
						r.bound, r.boundPkg, r.boundIsResult = c.flowTo, c.pkg, true
					}
				}
				if w.recvBound {
					if se, ok := ast.Unparen(c.expr.Fun).(*ast.SelectorExpr); ok {
						if sel := c.pkg.TypesInfo.Selections[se]; sel != nil && sel.Kind() == types.MethodVal {
							steps, base := chainOf(c.pkg.TypesInfo, se.X)
							r.prefix = append(append([]step(nil), steps...), w.inner.prefix...)
							r.prefixRoot = nil
							if v := baseVar(c.pkg.TypesInfo, base); isPackageVar(v) {
								r.prefixRoot = v
							}
						}
					}
				}
				if name, ok := constString(c.pkg.TypesInfo, nameArg); ok {
					r.nameValue = name
					if w.format != "" {
						name = fmt.Sprintf(w.format, name)
					}
					r.name = name
					regs = append(regs, r)
					continue
				}
				if c.fn.obj == nil {
					continue
				}
				if pi := paramOf(c.fn, nameArg); pi >= 0 && w.format == "" {
					nw := &wrapper{nameParam: pi, boundParam: -1, inner: r, recvBound: w.recvBound && boundFromReceiver(c.fn, recvExpr(c.expr))}
					if w.boundParam >= 0 && w.boundParam < len(c.expr.Args) {
						b := ast.Unparen(c.expr.Args[w.boundParam])
						if u, ok := b.(*ast.UnaryExpr); ok && u.Op == token.AND {
							b = u.X
						}
						nw.boundParam = paramOf(c.fn, b)
					}
					wrappers[c.fn.obj] = append(wrappers[c.fn.obj], nw)
					changed = true
				}
			}
		}
	}
	for _, r := range regs {
		ix.regRanges = append(ix.regRanges, posRange{r.call.expr.Pos(), r.call.expr.End()})
	}
	sort.Slice(ix.regRanges, func(i, j int) bool { return ix.regRanges[i].start < ix.regRanges[j].start })
	return regs
}

func containsReg(regs []*reg, c *call) bool {
	for _, r := range regs {
		if r.call == c {
			return true
		}
	}
	return false
}

func (ix *index) inRegistration(pos token.Pos) bool {
	i := sort.Search(len(ix.regRanges), func(i int) bool { return ix.regRanges[i].start > pos })
	for j := i - 1; j >= 0 && j >= i-8; j-- {
		if ix.regRanges[j].start <= pos && pos < ix.regRanges[j].end {
			return true
		}
	}
	return false
}

func isValueIface(t types.Type) bool {
	n, ok := t.(*types.Named)
	return ok && n.Obj().Pkg() != nil && isFlagPkg(n.Obj().Pkg().Path()) && n.Obj().Name() == "Value"
}

func qualifiedFunc(f *types.Func) string {
	if f == nil {
		return ""
	}
	sig := f.Type().(*types.Signature)
	pkg := ""
	if f.Pkg() != nil {
		pkg = f.Pkg().Path() + "."
	}
	if sig.Recv() != nil {
		return pkg + "(" + typeShort(sig.Recv().Type()) + ")." + f.Name()
	}
	return pkg + f.Name()
}

// binding is a path whose reads count as reads of a flag.
type binding struct {
	flag    int
	tier    int        // 0: the registered object; 1: a field or variable the value was copied to
	steps   []step     // field path, outermost first (may be empty for a variable)
	rootVar *types.Var // package-level or local variable the path starts from, if any
	hop     int        // tier 1: how many copies away from the registered object
	via     string     // tier 1: where the value was copied
	src     *occ       // tier 1: the read that copied it
	onlyIn  *funcNode  // tier 1: reads count only in this function (a protobuf message's fields, reads.go)
	display string     // qualified selector of the last element
	path    string     // full path for display
}

// resolveBound turns the pointer (or flag.Value) argument of a registration into a binding.
func (ix *index) resolveBound(info *types.Info, e ast.Expr, depth int) (steps []step, root *types.Var, kind string) {
	if e == nil || depth > 3 {
		return nil, nil, "none"
	}
	e = ast.Unparen(e)
	switch x := e.(type) {
	case *ast.UnaryExpr:
		if x.Op == token.AND {
			if cl, ok := ast.Unparen(x.X).(*ast.CompositeLit); ok {
				return ix.resolveComposite(info, cl, depth)
			}
			return ix.pathOf(info, x.X)
		}
	case *ast.CompositeLit:
		return ix.resolveComposite(info, x, depth)
	case *ast.CallExpr:
		// A constructor wrapping a pointer: cliflag.NewMapStringBool(&s.X), utilflag.NewX(&o.Y, ...).
		for _, a := range x.Args {
			if u, ok := ast.Unparen(a).(*ast.UnaryExpr); ok && u.Op == token.AND {
				if s, r, k := ix.resolveBound(info, a, depth+1); k != "none" {
					return s, r, k
				}
			}
		}
		for _, a := range x.Args {
			if tv, ok := info.Types[a]; ok && tv.Type != nil {
				if _, isPtr := tv.Type.Underlying().(*types.Pointer); isPtr {
					if s, r, k := ix.pathOf(info, a); k != "none" {
						return s, r, k
					}
				}
			}
		}
		return nil, nil, "value"
	case *ast.SelectorExpr, *ast.Ident:
		// A flag.Value held in a field or variable (etcd's cfg.cf.clusterState), or a pointer to one.
		return ix.pathOf(info, x)
	}
	return nil, nil, "none"
}

func (ix *index) resolveComposite(info *types.Info, cl *ast.CompositeLit, depth int) ([]step, *types.Var, string) {
	for _, el := range cl.Elts {
		v := el
		if kv, ok := el.(*ast.KeyValueExpr); ok {
			v = kv.Value
		}
		if u, ok := ast.Unparen(v).(*ast.UnaryExpr); ok && u.Op == token.AND {
			if s, r, k := ix.resolveBound(info, v, depth+1); k != "none" {
				return s, r, k
			}
		}
	}
	return nil, nil, "value"
}

// baseVar is the variable an expression names: a local or package-level variable, or a
// qualified pkg.Var.
func baseVar(info *types.Info, base ast.Expr) *types.Var {
	var id *ast.Ident
	switch x := ast.Unparen(base).(type) {
	case *ast.Ident:
		id = x
	case *ast.SelectorExpr:
		if info.Selections[x] == nil {
			id = x.Sel
		}
	}
	if id == nil {
		return nil
	}
	obj := info.Uses[id]
	if obj == nil {
		obj = info.Defs[id]
	}
	v, ok := obj.(*types.Var)
	if !ok || v.IsField() {
		return nil
	}
	return v.Origin()
}

func isPackageVar(v *types.Var) bool {
	return v != nil && v.Pkg() != nil && v.Parent() == v.Pkg().Scope()
}

// pathOf is the field path or variable an expression stores into. A bare parameter or receiver
// (ix.params) is not a binding: it would only describe the function it belongs to.
func (ix *index) pathOf(info *types.Info, e ast.Expr) ([]step, *types.Var, string) {
	steps, base := chainOf(info, e)
	var root *types.Var
	if v := baseVar(info, base); v != nil {
		if isPackageVar(v) || (len(steps) == 0 && !ix.params[v]) {
			root = v
		}
	}
	if len(steps) == 0 && root == nil {
		return nil, nil, "none"
	}
	if len(steps) == 0 {
		return nil, root, "variable"
	}
	return steps, root, "field"
}

var (
	reValidation = regexp.MustCompile(`(?i)validat`)
	reApply      = regexp.MustCompile(`^(\(\*?\w+\)\.)?(Apply\w*|Complete\w*|To[A-Z]\w*|New\w*Config|Config|BuildAuth\w*|\w*Config\w*)$`)
)

func readKind(c component, pkgPath, file, fn string) string {
	base := filepath.Base(file)
	short := fn
	if i := strings.LastIndex(fn, "."); i >= 0 {
		short = fn[i+1:]
	}
	switch {
	case strings.HasPrefix(base, "zz_generated"), strings.HasSuffix(base, ".pb.go"), strings.HasSuffix(base, ".pb.gw.go"), strings.HasPrefix(short, "Convert_"), strings.HasPrefix(short, "autoConvert_"),
		strings.HasPrefix(short, "DeepCopy"), strings.HasPrefix(short, "SetDefaults"), strings.HasPrefix(short, "SetObjectDefaults"):
		return "generated"
	case reValidation.MatchString(short) || strings.HasSuffix(pkgPath, "/validation") || strings.Contains(base, "validation"):
		return "validation"
	case strings.HasPrefix(pkgPath, c.AppPkg) && !strings.Contains(pkgPath[len(c.AppPkg):], "options"):
		return "app"
	case strings.Contains(pkgPath, "/options") || strings.Contains(pkgPath, "/config/"):
		if reApply.MatchString(fn) {
			return "apply"
		}
		return "options"
	}
	return "consumer"
}

var kindRank = map[string]int{"consumer": 0, "lookup": 1, "app": 1, "apply": 2, "options": 3, "log": 3, "validation": 4, "generated": 5}

func (ix *index) site(p *packages.Package, fn *funcNode, pos token.Pos) (Site, error) {
	position := ix.prog.fset.Position(pos)
	pkg := ix.fileOfPkg[position.Filename]
	if pkg == nil {
		pkg = p
	}
	m, ok := ix.prog.modRoot[pkg.PkgPath]
	if !ok {
		return Site{}, fmt.Errorf("%s: no module for package %s", position, pkg.PkgPath)
	}
	rel, err := filepath.Rel(m.Dir, position.Filename)
	if err != nil || strings.HasPrefix(rel, "..") {
		return Site{}, fmt.Errorf("%s is outside module %s (%s)", position.Filename, m.Path, m.Dir)
	}
	rel = filepath.ToSlash(rel)
	s := Site{Module: m.Path, Version: m.Version, File: rel, Line: position.Line, Col: position.Column, Package: pkg.PkgPath}
	s.URL = upstreamURL(m.Path, m.Version, rel, position.Line)
	if fn != nil {
		s.Function = fn.name
	}
	s.Excerpt = trimExcerpt(ix.line(position.Filename, position.Line))
	return s, nil
}

func (ix *index) line(file string, n int) string {
	lines, ok := ix.lines[file]
	if !ok {
		b, err := os.ReadFile(file)
		if err == nil {
			lines = strings.Split(string(b), "\n")
		}
		ix.lines[file] = lines
	}
	if n-1 < len(lines) && n >= 1 {
		return lines[n-1]
	}
	return ""
}

// upstreamURL links a file of a pinned module to the same line in its upstream repository.
func upstreamURL(mod, version, file string, line int) string {
	anchor := fmt.Sprintf("#L%d", line)
	switch {
	case mod == "k8s.io/kubernetes":
		return "https://github.com/kubernetes/kubernetes/blob/" + version + "/" + file + anchor
	case strings.HasPrefix(mod, "k8s.io/") && version == stagingVersion:
		// Staging modules are published from kubernetes/kubernetes staging/src/k8s.io/<name>.
		return "https://github.com/kubernetes/kubernetes/blob/" + kubernetesVersion + "/staging/src/" + mod + "/" + file + anchor
	case strings.HasPrefix(mod, "go.etcd.io/etcd/"):
		// go.etcd.io/etcd/server/v3 -> server/, client/pkg/v3 -> client/pkg/, client/v3 -> client/v3/.
		sub := strings.TrimPrefix(mod, "go.etcd.io/etcd/")
		if sub != "client/v3" {
			sub = strings.TrimSuffix(sub, "/v3")
		}
		return "https://github.com/etcd-io/etcd/blob/" + version + "/" + sub + "/" + file + anchor
	}
	return ""
}
