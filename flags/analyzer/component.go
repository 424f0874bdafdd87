package main

import (
	"fmt"
	"go/ast"
	"go/printer"
	"go/token"
	"go/types"
	"regexp"
	"sort"
	"strings"
	"unicode"

	"golang.org/x/tools/go/packages"
)

const maxConsumed = 8

// maxHops bounds how many copies of a flag's value are followed.
const maxHops = 3

type attributed struct {
	o    *occ
	b    *binding
	m    int
	tier int // 0 direct, 1 copied value, 2 lookup by name, 3 containing struct, 4 shared code
	read Read
}

// readClass orders reads: meaningful direct or copied reads, then reads of the containing
// struct, then validation, then generated conversion/deep-copy code.
func readClass(a attributed) int {
	switch a.read.Kind {
	case "validation":
		return 2
	case "generated":
		return 3
	case "log":
		return 1
	}
	if a.tier >= 3 {
		return 1
	}
	return 0
}

// plumbing: the read only copies the value into a field or variable of the same name
// (cfg.AuthToken = o.AuthToken): the reads further on explain the flag better.
func plumbing(r Read) bool {
	if r.CopyTo == "" {
		return false
	}
	src := strings.ToLower(strings.TrimPrefix(r.Selector, "."))
	dst := r.CopyTo
	if i := strings.LastIndex(dst, "."); i >= 0 {
		dst = dst[i+1:]
	}
	dst = strings.ToLower(dst)
	return src != "" && dst != "" && (strings.Contains(src, dst) || strings.Contains(dst, src))
}

func oneFieldStruct(t types.Type) bool {
	if t == nil {
		return false
	}
	st, ok := t.Underlying().(*types.Struct)
	if !ok || st.NumFields() != 1 {
		return false
	}
	// A value wrapper such as metav1.Duration{Duration time.Duration}: field named like its type.
	n, ok := types.Unalias(t).(*types.Named)
	return ok && st.Field(0).Name() == n.Obj().Name()
}

// occKind is readKind, with reads that only print the value (log fields, String methods) as "log".
func occKind(c component, o *occ, site Site) string {
	k := readKind(c, o.pkg.PkgPath, site.File, o.fn.name)
	if k != "generated" && k != "validation" && (o.logged || isPrinter(o.fn.name)) {
		return "log"
	}
	return k
}

func stdlibField(v *types.Var) bool {
	if v.Pkg() == nil {
		return true
	}
	first, _, _ := strings.Cut(v.Pkg().Path(), "/")
	return !strings.Contains(first, ".")
}

// isPrinter: String/Error methods format the value for people; they do not act on it.
func isPrinter(fn string) bool {
	short := fn
	if i := strings.LastIndex(fn, "."); i >= 0 {
		short = fn[i+1:]
	}
	return short == "String" || short == "Error" || short == "GoString" || short == "MarshalLogObject"
}

// nameTableReads: a package-level map keyed by flag names and ranged over, so that each flag is
// read by name (etcd 3.6's features.ExperimentalFlagToFeatureMap feeds
// SetFeatureGatesFromExperimentalFlags, which fetches each experimental-* flag's value).
func (ix *index) nameTableReads(c component, closure map[string]bool, runs map[*funcNode]bool, nameIdx map[string]int, names []string) []attributed {
	var out []attributed
	for _, p := range ix.prog.all {
		if !closure[p.PkgPath] {
			continue
		}
		for _, vl := range packageVarLiterals(p) {
			if _, ok := p.TypesInfo.TypeOf(vl.lit).Underlying().(*types.Map); !ok {
				continue
			}
			v, _ := p.TypesInfo.Defs[vl.name].(*types.Var)
			if v == nil {
				continue
			}
			var keys []int
			keyPos := map[int]token.Pos{}
			for _, el := range vl.lit.Elts {
				kv, ok := el.(*ast.KeyValueExpr)
				if !ok {
					continue
				}
				if s, ok := constString(p.TypesInfo, kv.Key); ok {
					if i, ok := nameIdx[s]; ok {
						keys = append(keys, i)
						keyPos[i] = kv.Key.Pos()
					}
				}
			}
			if len(keys) == 0 {
				continue
			}
			sort.Ints(keys)
			for _, o := range ix.varOccs[v.Origin()] {
				if !o.ranged || !closure[o.pkg.PkgPath] || o.fn == nil || (o.fn.obj != nil && !runs[o.fn]) {
					continue
				}
				site, err := ix.site(o.pkg, o.fn, o.expr.Pos())
				if err != nil {
					continue
				}
				for _, i := range keys {
					key, err := ix.site(p, nil, keyPos[i])
					if err != nil {
						continue
					}
					rd := Read{Site: site, Selector: v.Name(), Kind: readKind(c, o.pkg.PkgPath, site.File, o.fn.name), Match: 0,
						Via: fmt.Sprintf("by name: the loop over %s.%s, whose key %q is at %s:%d", v.Pkg().Name(), v.Name(), names[i], key.File, key.Line)}
					out = append(out, attributed{b: &binding{flag: i}, tier: 2, read: rd})
				}
			}
		}
	}
	return out
}

// handsToOtherModule: the read copies the value into a field of a type from another module (a
// client library's config), which is where the value leaves for the code that acts on it.
func (ix *index) handsToOtherModule(a attributed) bool {
	if a.o == nil || a.o.flowTo == nil {
		return false
	}
	steps, _, kind := ix.flowTarget(a.o)
	if kind != "field" || len(steps) == 0 {
		return false
	}
	v := steps[len(steps)-1].v
	if v.Pkg() == nil {
		return false
	}
	m, ok := ix.prog.modRoot[v.Pkg().Path()]
	return ok && m.Path != a.read.Module
}

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

// promoteDownstream puts, in front of each plumbing copy, the best read of the place it copies
// to (following further plumbing copies): the code that acts on the value, not the line that
// moves it. The order is otherwise unchanged.
func promoteDownstream(sorted []attributed) []attributed {
	children := map[*occ][]int{}
	for i, a := range sorted {
		if a.b.src != nil {
			children[a.b.src] = append(children[a.b.src], i)
		}
	}
	// The first downstream use that hands the value to a call (loads the file, builds the
	// client), else the first downstream use at all.
	var walk func(o *occ, depth int, arg bool) int
	walk = func(o *occ, depth int, arg bool) int {
		if depth > maxHops {
			return -1
		}
		for _, i := range children[o] {
			a := sorted[i]
			if readClass(a) != 0 {
				continue
			}
			if !plumbing(a.read) && (!arg || a.o.arg) {
				return i
			}
			if j := walk(a.o, depth+1, arg); j >= 0 {
				return j
			}
		}
		return -1
	}
	use := func(o *occ) int {
		if j := walk(o, 1, true); j >= 0 {
			return j
		}
		return walk(o, 1, false)
	}
	out := make([]attributed, 0, len(sorted))
	done := make([]bool, len(sorted))
	for i, a := range sorted {
		if done[i] {
			continue
		}
		if a.o != nil && plumbing(a.read) && readClass(a) == 0 {
			if j := use(a.o); j >= 0 && !done[j] {
				out = append(out, sorted[j])
				done[j] = true
			}
		}
		out = append(out, a)
		done[i] = true
	}
	return out
}

// analysis is one component's run over the index of its load: the steps of analyze read it and
// fill it in, and nothing of it outlives the component.
type analysis struct {
	c      component
	ix     *index
	prog   *program
	rootFn *types.Func
	// reach: functions reachable from c.Root, where the component's registrations are.
	reach map[*funcNode]bool
	// closure: packages in the import closure of c.Patterns. Registrations, lookups and reads
	// only count there, because the index holds every command of the load.
	closure map[string]bool
	// runs: functions reachable from c.Entry (c.Root without one). Reads there rank first.
	runs     map[*funcNode]bool
	names    []string       // the flag set, sorted
	nameIdx  map[string]int // name -> index into names and flags
	flags    []FlagOut      // parallel to names
	bindings []*binding     // registered objects (tier 0) and values stored from lookups (tier 1)
	doc      *Doc
}

// analyze maps one component's flags. It finds the flag set, each flag's registration and
// bound object, then the reads of those objects: direct, through copies, by name, and of the
// containing struct. The reads are ranked so the one that acts on the value comes first.
func analyze(ix *index, c component, rt []runtimeFlag) (*Doc, error) {
	a, err := newAnalysis(ix, c)
	if err != nil {
		return nil, err
	}
	cands := a.candidates()
	a.setNames(flagNames(c, cands, rt))
	a.doc = newDoc(c)
	if err := a.registerFlags(cands, rt); err != nil {
		return nil, err
	}
	lookups, err := a.lookupReads()
	if err != nil {
		return nil, err
	}
	if err := a.entryReach(); err != nil {
		return nil, err
	}
	lookups = append(lookups, ix.nameTableReads(c, a.closure, a.runs, a.nameIdx, a.names)...)

	// Direct reads (tier 0), then reads of the places those values are copied to (tier 1).
	claimed := map[*occ]bool{}
	direct, ambiguous := ix.attribute(c, a.closure, a.bindings, 0, claimed)
	viaReads := a.copiedReads(direct, ambiguous, claimed)
	handsOn := handedOn(viaReads)
	// Reads of the struct that holds the flag's field, passed on as a whole (etcd's
	// cfg.PeerTLSInfo handed to the listener): a read of every flag bound inside it.
	containerReads := ix.containerReads(c, a.closure, a.bindings, claimed)

	perFlag := byFlag(direct, viaReads, lookups, containerReads)
	for i := range a.flags {
		a.summarize(i, a.rankReads(perFlag[i], handsOn), ambiguous[i])
	}
	a.doc.Flags = a.flags
	return a.doc, nil
}

// newAnalysis starts a component's run from its root function. Registrations only count in
// code reachable from it, and lookups and reads only in the packages its command imports.
func newAnalysis(ix *index, c component) (*analysis, error) {
	rootFn, err := lookupFunc(ix.prog, c.Root)
	if err != nil {
		return nil, fmt.Errorf("root: %w", err)
	}
	reach := ix.reachable(rootFn)
	return &analysis{c: c, ix: ix, prog: ix.prog, rootFn: rootFn, reach: reach, runs: reach, closure: importClosure(ix.prog, c.Patterns)}, nil
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

// candidates groups by name the registrations this component can run. They must be in its import
// closure and in code it reaches, and use its flag package: etcd registers with the standard
// library's flag, Kubernetes with pflag.
func (a *analysis) candidates() map[string][]*reg {
	cands := map[string][]*reg{}
	for _, r := range a.ix.regs {
		if !a.closure[r.call.pkg.PkgPath] {
			continue
		}
		// Package-level variable initializers always run; functions must be reachable.
		if r.call.fn.obj != nil && !a.reach[r.call.fn] {
			continue
		}
		std := r.callee.Pkg().Path() == "flag"
		if std != a.c.StdFlag {
			continue
		}
		cands[r.name] = append(cands[r.name], r)
	}
	return cands
}

// flagNames is the component's flag set, sorted. For Kubernetes it is the flags the real cobra
// command has (rt). etcd's runtime list only supplies defaults, so its set is also every name
// that newConfig registers.
func flagNames(c component, cands map[string][]*reg, rt []runtimeFlag) []string {
	if !c.StdFlag {
		var names []string
		for _, f := range rt {
			names = append(names, f.Name)
		}
		sort.Strings(names)
		return names
	}
	seen := map[string]bool{}
	for n := range cands {
		seen[n] = true
	}
	for _, f := range rt {
		seen[f.Name] = true
	}
	return sortedKeys(seen)
}

// setNames fixes the flag order: a flag's index in names is its index in flags and in bindings.
func (a *analysis) setNames(names []string) {
	a.names = names
	a.nameIdx = map[string]int{}
	for i, n := range names {
		a.nameIdx[n] = i
	}
	a.flags = make([]FlagOut, len(names))
}

// newDoc is the output's header: the component, its version, and how its flag set was found.
func newDoc(c component) *Doc {
	doc := &Doc{Component: c.Name, KubernetesVersion: kubernetesVersion, Root: c.Root, Gaps: []string{}}
	doc.ComponentVersion = kubernetesVersion
	doc.Method = "flag set: pflag FlagSet of the command built by " + c.Root + " (via cmd/k8sflags); sources: static analysis with go/packages"
	if c.StdFlag {
		doc.ComponentVersion = etcdVersion
		doc.Method = "flag set: flag registrations reachable from " + c.Root + "; defaults: embed.Config.AddFlags at runtime (etcd/cmd/etcdflags); sources: static analysis with go/packages"
	}
	return doc
}

// registerFlags describes every flag in name order, which is also the order of the gaps it
// reports.
func (a *analysis) registerFlags(cands map[string][]*reg, rt []runtimeFlag) error {
	rtByName := map[string]runtimeFlag{}
	for _, f := range rt {
		rtByName[f.Name] = f
	}
	deprecated := map[string]string{}
	if a.c.StdFlag {
		// etcd keeps its deprecated flags' messages in a table, not on the flags.
		deprecated = stringMapVar(a.prog.byPath[a.rootFn.Pkg().Path()], "deprecatedFlags")
	}
	for i, name := range a.names {
		rf, hasRT := rtByName[name]
		if err := a.registerFlag(i, cands[name], rf, hasRT, deprecated); err != nil {
			return err
		}
	}
	return nil
}

// registerFlag describes one flag: what pflag reports for it, every registration of its name
// that the component can run (the first is RegisteredAt), and the objects they bind.
func (a *analysis) registerFlag(i int, cands []*reg, rf runtimeFlag, hasRT bool, deprecated map[string]string) error {
	f := &a.flags[i]
	name := a.names[i]
	f.Name = name
	f.ConsumedAt = []Read{}
	rs := chooseRegistrations(cands, rf, hasRT)
	if hasRT {
		applyRuntime(f, rf)
	}
	if msg, ok := deprecated[name]; ok {
		f.Deprecated, f.DeprecatedMessage = true, msg
	}
	if len(rs) == 0 {
		f.Binding, f.ReadBy = "none", "none"
		a.doc.Gaps = append(a.doc.Gaps, fmt.Sprintf("--%s: no registration with a constant name found in code reachable from %s", name, a.c.Root))
		return nil
	}
	if len(rs) > 1 {
		a.doc.Gaps = append(a.doc.Gaps, fmt.Sprintf("--%s: %d registrations with this name are reachable; all are listed and their bound objects all count", name, len(rs)))
	}
	for j, r := range rs {
		reg, err := a.ix.registration(r)
		if err != nil {
			return err
		}
		if j == 0 {
			f.RegisteredAt = &reg
		} else {
			f.AlsoRegisteredAt = append(f.AlsoRegisteredAt, reg)
		}
		if !hasRT {
			staticFacts(a.prog.fset, f, r)
		} else if a.c.StdFlag && f.Type == "" {
			f.Type = staticType(r)
		}
		a.bind(i, r)
	}
	return nil
}

// chooseRegistrations orders a name's registrations by position. When several are reachable and
// pflag reports the flag, it keeps those whose usage text is the flag's help: the ones the
// command really made.
func chooseRegistrations(cands []*reg, rf runtimeFlag, hasRT bool) []*reg {
	rs := append([]*reg(nil), cands...)
	sort.Slice(rs, func(a, b int) bool { return rs[a].call.expr.Pos() < rs[b].call.expr.Pos() })
	if len(rs) > 1 && hasRT {
		var same []*reg
		for _, r := range rs {
			if r.hasUsage && r.usage == rf.Help {
				same = append(same, r)
			}
		}
		if len(same) > 0 {
			rs = same
		}
	}
	return rs
}

// applyRuntime copies what pflag itself reports for the flag: the running command's facts beat
// what the source says.
func applyRuntime(f *FlagOut, rf runtimeFlag) {
	f.Shorthand, f.Type, f.Default, f.Help, f.Hidden = rf.Shorthand, rf.Type, rf.Default, rf.Help, rf.Hidden
	if rf.Deprecated != "" {
		f.Deprecated, f.DeprecatedMessage = true, rf.Deprecated
	}
}

// registration cites where r registers the name. A name passed through a helper cites the
// pflag/flag call and also the call site that passes the constant. A named constant also cites
// the line that holds its literal.
func (ix *index) registration(r *reg) (Registration, error) {
	var reg Registration
	if r.inner != r.call {
		site, err := ix.site(r.inner.pkg, r.inner.fn, r.inner.expr.Pos())
		if err != nil {
			return Registration{}, err
		}
		from, err := ix.site(r.call.pkg, r.call.fn, r.nameArg.Pos())
		if err != nil {
			return Registration{}, err
		}
		reg = Registration{Site: site, Call: qualifiedFunc(r.callee), Via: r.via, CalledFrom: &from, NameArg: r.nameValue, NameFormat: r.format}
	} else {
		site, err := ix.site(r.call.pkg, r.call.fn, r.nameArg.Pos())
		if err != nil {
			return Registration{}, err
		}
		reg = Registration{Site: site, Call: qualifiedFunc(r.callee)}
	}
	if id := constIdent(r.call.pkg.TypesInfo, r.nameArg); id != nil {
		cs, err := ix.site(r.call.pkg, nil, id.Pos())
		if err == nil {
			reg.NameConst = &ConstRef{Ident: id.Name(), Site: cs}
		}
	}
	return reg, nil
}

// staticFacts fills in type, help and default from the registration call's arguments. This is
// for a flag that pflag does not report, such as an etcd flag that its runtime list lacks.
func staticFacts(fset fileSet, f *FlagOut, r *reg) {
	f.Type = staticType(r)
	f.Help = r.usage
	if d, ok := constString(r.call.pkg.TypesInfo, r.defExpr); ok {
		f.Default = d
	} else if r.defExpr != nil {
		if tv, ok := r.call.pkg.TypesInfo.Types[r.defExpr]; ok && tv.Value != nil {
			f.Default = tv.Value.ExactString()
		} else {
			f.DefaultNote = "not a constant: " + exprString(fset, r.defExpr)
		}
	} else {
		f.DefaultNote = "set by the flag.Value constructor"
	}
}

// bind records the object r stores flag i's value in: its reads are the flag's reads. The
// first registration's field or variable is the one the flag shows.
func (a *analysis) bind(i int, r *reg) {
	f := &a.flags[i]
	steps, root, kind := a.ix.boundObject(r)
	if f.Binding == "" || f.Binding == "value" || f.Binding == "none" {
		f.Binding = kind
	}
	if kind == "field" || kind == "variable" {
		b := &binding{flag: i, steps: steps, rootVar: root}
		b.display, b.path = describe(steps, root)
		if f.Field == "" {
			f.Field, f.Path = b.display, b.path
		}
		a.bindings = append(a.bindings, b)
	}
}

// boundObject is the field path or variable a registration stores the flag's value in. That is
// its pointer argument, or where a helper's returned pointer or fs.String's result is stored.
// A helper that registers fields of its receiver adds the path to that receiver.
func (ix *index) boundObject(r *reg) ([]step, *types.Var, string) {
	steps, root, kind := ix.resolveBound(r.boundPkg.TypesInfo, r.bound, 0)
	if r.boundIsResult {
		steps, root, kind = ix.pathOf(r.boundPkg.TypesInfo, r.bound)
	}
	if r.bound == nil && r.call.flowTo != nil {
		steps, root, kind = ix.pathOf(r.call.pkg.TypesInfo, r.call.flowTo)
	}
	if len(r.prefix) > 0 && kind == "field" {
		steps = append(append([]step(nil), r.prefix...), steps...)
		root = r.prefixRoot
	}
	return steps, root, kind
}

// lookupReads finds reads of flags by name: fs.Lookup("x"), fs.Changed("x"), etcd's
// flags.UniqueURLsFromFlag(fs, "x"). These read the flag without its bound object.
func (a *analysis) lookupReads() ([]attributed, error) {
	ix := a.ix
	var lookups []attributed
	for _, cl := range ix.calls {
		if !a.closure[cl.pkg.PkgPath] || ix.inRegistration(cl.expr.Pos()) {
			continue
		}
		callee := calleeOf(cl.pkg.TypesInfo, cl.expr)
		if callee == nil || !isLookup(callee) {
			continue
		}
		for _, arg := range cl.expr.Args {
			s, ok := constString(cl.pkg.TypesInfo, arg)
			if !ok {
				continue
			}
			i, ok := a.nameIdx[s]
			if !ok {
				continue
			}
			rd, err := a.lookupRead(cl, callee, arg, s)
			if err != nil {
				return nil, err
			}
			lookups = append(lookups, attributed{b: &binding{flag: i}, tier: 2, read: rd})
			if cl.flowTo != nil {
				a.bindLookup(i, cl)
			}
		}
	}
	return lookups, nil
}

// lookupRead cites the name argument of a lookup call. A named constant is cited by its name,
// because that is what the line holds.
func (a *analysis) lookupRead(cl *call, callee *types.Func, arg ast.Expr, name string) (Read, error) {
	site, err := a.ix.site(cl.pkg, cl.fn, arg.Pos())
	if err != nil {
		return Read{}, err
	}
	sel := fmt.Sprintf("%q", name)
	if id := constIdent(cl.pkg.TypesInfo, arg); id != nil {
		sel = id.Name()
	}
	return Read{Site: site, Selector: sel, Kind: readKind(a.c, cl.pkg.PkgPath, site.File, cl.fn.name), Match: 0, Via: "lookup by name: " + qualifiedFunc(callee)}, nil
}

// bindLookup follows a looked-up value into the field or variable it is stored in. That place is
// a copy of flag i (tier 1) whose reads count too. It is also the flag's binding when no
// registration bound a field or variable.
func (a *analysis) bindLookup(i int, cl *call) {
	steps, root, kind := a.ix.pathOf(cl.pkg.TypesInfo, cl.flowTo)
	if kind != "field" && kind != "variable" {
		return
	}
	b := &binding{flag: i, tier: 1, steps: steps, rootVar: root}
	b.display, b.path = describe(steps, root)
	b.via = b.display
	a.bindings = append(a.bindings, b)
	f := &a.flags[i]
	if f.Binding != "field" && f.Binding != "variable" {
		f.Binding = "lookup"
		if f.Field == "" {
			f.Field, f.Path = b.display, b.path
		}
	}
}

// entryReach sets the code the process runs, such as etcd's etcdmain.Main and not only
// newConfig. Reads there rank before reads in code that shares the same types.
func (a *analysis) entryReach() error {
	if a.c.Entry == "" {
		return nil
	}
	fn, err := lookupFunc(a.prog, a.c.Entry)
	if err != nil {
		return err
	}
	a.runs = a.ix.reachable(fn)
	return nil
}

// copiedReads follows values through copies, because they are often copied several times
// before use (options -> Config -> GenericAPIServer). It follows up to maxHops copies, so the
// read that acts on the value is found too. Reads that several flags share are added to
// ambiguous.
func (a *analysis) copiedReads(direct []attributed, ambiguous map[int]int, claimed map[*occ]bool) []attributed {
	seen := map[string]bool{}
	flows := a.ix.copyBindings(direct, seen)
	// Values stored from a lookup by name are already one copy away.
	for _, b := range a.bindings {
		if b.tier == 1 {
			b.hop = 1
			flows = append(flows, b)
		}
	}
	var viaReads []attributed
	for hop := 1; hop <= maxHops && len(flows) > 0; hop++ {
		got, amb := a.ix.attribute(a.c, a.closure, flows, 1, claimed)
		for i, n := range amb {
			ambiguous[i] += n
		}
		viaReads = append(viaReads, got...)
		flows = a.ix.copyBindings(got, seen)
	}
	return viaReads
}

// copyBindings turns reads that copy a flag's value into a field or variable into bindings of
// those places, one hop further, so that their reads count too. seen spans all hops of one
// component, so that no place is followed twice for the same flag.
func (ix *index) copyBindings(reads []attributed, seen map[string]bool) []*binding {
	var flows []*binding
	for _, a := range reads {
		if a.o == nil || a.o.flowTo == nil || a.o.write || a.tier == 4 {
			continue
		}
		steps, root, kind := ix.flowTarget(a.o)
		if kind != "field" && kind != "variable" {
			continue
		}
		if len(steps) > 0 && len(a.b.steps) > 0 && steps[len(steps)-1].v == a.b.steps[len(a.b.steps)-1].v {
			continue // copied into the same field of another instance: the earlier hop already matches it
		}
		if len(steps) > 0 && stdlibField(steps[len(steps)-1].v) {
			continue // tls.Config.InsecureSkipVerify is read all over: its reads say nothing about this flag
		}
		b := &binding{flag: a.b.flag, tier: 1, steps: steps, rootVar: root, src: a.o, hop: a.b.hop + 1}
		b.display, b.path = describe(steps, root)
		b.via = b.display
		key := fmt.Sprintf("%d|%s|%p", b.flag, b.path, root)
		if seen[key] {
			continue
		}
		seen[key] = true
		flows = append(flows, b)
	}
	return flows
}

// handedOn marks the reads whose value is copied and read again. Such a read explains the flag
// better than one whose value goes no further.
func handedOn(viaReads []attributed) map[*occ]bool {
	handsOn := map[*occ]bool{}
	for _, a := range viaReads {
		if a.b.src != nil {
			handsOn[a.b.src] = true
		}
	}
	return handsOn
}

// byFlag gathers each flag's reads from the lists in the order given. The ranking sort is
// stable, so that order breaks the last ties.
func byFlag(lists ...[]attributed) map[int][]attributed {
	perFlag := map[int][]attributed{}
	for _, list := range lists {
		for _, a := range list {
			perFlag[a.b.flag] = append(perFlag[a.b.flag], a)
		}
	}
	return perFlag
}

// rankReads orders a flag's reads so that the first is the line that acts on the value. Then
// promoteDownstream puts the read each plumbing copy leads to in front of that copy.
func (a *analysis) rankReads(reads []attributed, handsOn map[*occ]bool) []attributed {
	sort.SliceStable(reads, func(x, y int) bool { return a.readBefore(reads[x], reads[y], handsOn) })
	return promoteDownstream(reads)
}

// readBefore is the ranking. It puts the read class first, then reads in code the component
// runs, the kind of code, the tier, and reads whose value is handed on. Then come uses before
// checks, a hand-off to another module, plain reads before pointers, and the longer match.
// Position decides last.
func (a *analysis) readBefore(x, y attributed, handsOn map[*occ]bool) bool {
	rx, ry := x.read, y.read
	if cx, cy := readClass(x), readClass(y); cx != cy {
		return cx < cy
	}
	// Code the component's command never calls (cloud-controller-manager's ApplyTo in a
	// shared module) may read the same config type: after code it does call.
	if ux, uy := a.unreached(x), a.unreached(y); ux != uy {
		return uy
	}
	kx, ky := kindRank[rx.Kind], kindRank[ry.Kind]
	if kx != ky {
		return kx < ky
	}
	if x.tier != y.tier {
		return x.tier < y.tier
	}
	if hx, hy := handsOn[x.o], handsOn[y.o]; hx != hy {
		return hx
	}
	if qx, qy := x.o != nil && x.o.cond, y.o != nil && y.o.cond; qx != qy {
		return qy // `if len(x) > 0` checks the value; `for _, m := range x` uses it
	}
	if hx, hy := a.ix.handsToOtherModule(x), a.ix.handsToOtherModule(y); hx != hy {
		return hx // Endpoints: c.ServerList into clientv3.Config: the library that connects
	}
	if ax, ay := x.o != nil && x.o.addr, y.o != nil && y.o.addr; ax != ay {
		return ay // a pointer handed out may be a write: after plain reads
	}
	if rx.Match != ry.Match {
		return rx.Match > ry.Match
	}
	if rx.Module != ry.Module {
		return rx.Module < ry.Module
	}
	if rx.File != ry.File {
		return rx.File < ry.File
	}
	if rx.Line != ry.Line {
		return rx.Line < ry.Line
	}
	return rx.Col < ry.Col
}

// unreached: the read is in a function the component's process never calls.
func (a *analysis) unreached(r attributed) bool {
	return r.o != nil && r.o.fn != nil && r.o.fn.obj != nil && !a.runs[r.o.fn]
}

// summarize writes flag i's ranked reads into its output. That is at most maxConsumed
// citations, the totals, how the flag is read, and its count in the coverage.
func (a *analysis) summarize(i int, reads []attributed, shared int) {
	f := &a.flags[i]
	uniq := citations(reads)
	f.ConsumedTotal = len(uniq)
	f.SharedReadsTotal = shared
	if len(uniq) > maxConsumed {
		uniq = uniq[:maxConsumed]
	}
	f.ConsumedAt = append(f.ConsumedAt, uniq...)
	f.ReadBy = readBy(reads)
	if f.Binding == "" {
		f.Binding = "none"
	}
	a.doc.Coverage.add(f)
}

// citations keeps the first read of each line, because a citation is a line.
func citations(reads []attributed) []Read {
	seen := map[string]bool{}
	var uniq []Read
	for _, a := range reads {
		k := fmt.Sprintf("%s/%s:%d", a.read.Module, a.read.File, a.read.Line)
		if seen[k] {
			continue
		}
		seen[k] = true
		uniq = append(uniq, a.read)
	}
	return uniq
}

// readBy classifies a flag by its reads. It is "read" when any read is outside validation and
// generated code. Otherwise it is validation-only, else copy-only (generated conversions), else
// none.
func readBy(reads []attributed) string {
	by := "none"
	hasValidation, hasGenerated := false, false
	for _, a := range reads {
		switch a.read.Kind {
		case "validation":
			hasValidation = true
		case "generated":
			hasGenerated = true
		default:
			by = "read"
		}
	}
	if by == "none" && hasValidation {
		return "validation-only"
	} else if by == "none" && hasGenerated {
		return "copy-only"
	}
	return by
}

// add counts one flag in the coverage table.
func (cov *Coverage) add(f *FlagOut) {
	cov.Flags++
	if f.RegisteredAt == nil {
		cov.Unregistered++
		return
	}
	cov.Registered++
	switch f.ReadBy {
	case "read":
		cov.WithRead++
	case "validation-only":
		cov.ValidationOnly++
	case "copy-only":
		cov.CopyOnly++
	default:
		cov.NeverRead++
	}
}

// attribute finds the reads of the given bindings. A field read is matched by its last field and
// then by how many trailing fields of the binding's path its selector spells out; the binding
// with the longest match wins, and a tie between different flags is ambiguous (counted, not cited).
func (ix *index) attribute(c component, closure map[string]bool, bs []*binding, tier int, claimed map[*occ]bool) ([]attributed, map[int]int) {
	byLast := map[*types.Var][]*binding{}
	byVar := map[*types.Var][]*binding{}
	var lastOrder []*types.Var
	for _, b := range bs {
		if len(b.steps) == 0 {
			if b.rootVar != nil {
				byVar[b.rootVar] = append(byVar[b.rootVar], b)
			}
			continue
		}
		last := b.steps[len(b.steps)-1].v
		if _, ok := byLast[last]; !ok {
			lastOrder = append(lastOrder, last)
		}
		byLast[last] = append(byLast[last], b)
	}
	var out []attributed
	amb := map[int]int{}
	consider := func(o *occ, cands []*binding, isVar bool) {
		if o.write || claimed[o] || !closure[o.pkg.PkgPath] || ix.inRegistration(o.expr.Pos()) {
			return
		}
		info := o.pkg.TypesInfo
		best, bestM := []*binding{}, 0
		for _, b := range cands {
			m := 1
			if !isVar {
				chain, base := chainOf(info, o.expr)
				m = stepsEqualSuffix(b.steps, chain)
				if m == 0 {
					continue
				}
				// x.Duration of a metav1.Duration says nothing about which flag it is: a field of a
				// one-field wrapper type only counts with the field that holds the wrapper.
				if m < 2 && len(b.steps) >= 2 && oneFieldStruct(b.steps[len(b.steps)-1].owner) {
					continue
				}
				if b.rootVar != nil {
					if m < len(b.steps) || len(chain) != len(b.steps) || baseVar(info, base) != b.rootVar {
						continue
					}
					m++
				}
			}
			if m > bestM {
				best, bestM = []*binding{b}, m
			} else if m == bestM {
				best = append(best, b)
			}
		}
		if len(best) == 0 {
			return
		}
		flagsHit := map[int]bool{}
		for _, b := range best {
			flagsHit[b.flag] = true
		}
		shared := ""
		if len(flagsHit) > 1 {
			// Code shared by several flags' instances (AuditBatchOptions methods run for both the
			// log and the webhook backend; transport code reads any TLSInfo): a read of each.
			for f := range flagsHit {
				amb[f]++
			}
			shared = fmt.Sprintf("shared: the same field path is bound by %d flags", len(flagsHit))
		}
		b := best[0]
		pos := o.expr.Pos()
		sel := ""
		switch e := o.expr.(type) {
		case *ast.SelectorExpr:
			pos, sel = e.Sel.Pos(), "."+e.Sel.Name
		case *ast.Ident:
			sel = e.Name
		}
		site, err := ix.site(o.pkg, o.fn, pos)
		if err != nil {
			return
		}
		claimed[o] = true
		rd := Read{Site: site, Selector: sel, Kind: occKind(c, o, site), Match: bestM, Via: b.via, Hop: b.hop}
		if o.flowTo != nil {
			if steps, root, kind := ix.flowTarget(o); kind == "field" || kind == "variable" {
				rd.CopyTo, _ = describe(steps, root)
			}
		}
		if shared != "" {
			rd.Via = strings.TrimPrefix(b.via+"; "+shared, "; ")
			seen := map[int]bool{}
			for _, bb := range best {
				if !seen[bb.flag] {
					seen[bb.flag] = true
					out = append(out, attributed{o: o, b: bb, m: bestM, tier: 4, read: rd})
				}
			}
			return
		}
		out = append(out, attributed{o: o, b: b, m: bestM, tier: tier, read: rd})
	}
	for _, last := range lastOrder {
		for _, o := range ix.fieldOccs[last] {
			consider(o, byLast[last], false)
		}
	}
	for v, cands := range byVar {
		for _, o := range ix.varOccs[v] {
			consider(o, cands, true)
		}
	}
	return out, amb
}

func (ix *index) flowTarget(o *occ) ([]step, *types.Var, string) {
	info := o.pkg.TypesInfo
	if o.flowIn != nil {
		id, ok := o.flowTo.(*ast.Ident)
		if !ok {
			return nil, nil, "none"
		}
		v, ok := info.Uses[id].(*types.Var)
		if !ok || !v.IsField() {
			return nil, nil, "none"
		}
		return []step{{v: v.Origin(), owner: o.flowIn}}, nil, "field"
	}
	if id, ok := o.flowTo.(*ast.Ident); ok {
		if id.Name == "_" {
			return nil, nil, "none"
		}
		v, _ := info.Defs[id].(*types.Var)
		if v == nil {
			v, _ = info.Uses[id].(*types.Var)
		}
		if v == nil {
			return nil, nil, "none"
		}
		return nil, v.Origin(), "variable"
	}
	return ix.pathOf(info, o.flowTo)
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

var reVarSuffix = regexp.MustCompile(`VarP?$`)

func staticType(r *reg) string {
	n := reVarSuffix.ReplaceAllString(r.callee.Name(), "")
	if n == "" && r.bound != nil {
		if tv, ok := r.boundPkg.TypesInfo.Types[r.bound]; ok && tv.Type != nil {
			return typeShort(tv.Type)
		}
	}
	if n == "" {
		return "value"
	}
	rs := []rune(n)
	rs[0] = unicode.ToLower(rs[0])
	return string(rs)
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

func (ix *index) containerReads(c component, closure map[string]bool, bs []*binding, claimed map[*occ]bool) []attributed {
	type group struct {
		steps   []step
		root    *types.Var
		flags   []int
		display string
	}
	groups := map[string]*group{}
	var keys []string
	for _, b := range bs {
		if b.tier != 0 || len(b.steps) < 2 {
			continue
		}
		cs := b.steps[:len(b.steps)-1]
		_, path := describe(cs, b.rootVar)
		g := groups[path]
		if g == nil {
			g = &group{steps: cs, root: b.rootVar}
			g.display, _ = describe(cs, b.rootVar)
			groups[path] = g
			keys = append(keys, path)
		}
		if len(g.flags) == 0 || g.flags[len(g.flags)-1] != b.flag {
			g.flags = append(g.flags, b.flag)
		}
	}
	sort.Strings(keys)
	byLast := map[*types.Var][]*group{}
	var lasts []*types.Var
	for _, k := range keys {
		g := groups[k]
		l := g.steps[len(g.steps)-1].v
		if _, ok := byLast[l]; !ok {
			lasts = append(lasts, l)
		}
		byLast[l] = append(byLast[l], g)
	}
	var out []attributed
	for _, l := range lasts {
		for _, o := range ix.fieldOccs[l] {
			if o.write || o.selected || claimed[o] || !closure[o.pkg.PkgPath] || ix.inRegistration(o.expr.Pos()) {
				continue
			}
			info := o.pkg.TypesInfo
			chain, base := chainOf(info, o.expr)
			var best []*group
			bestM := 0
			for _, g := range byLast[l] {
				m := stepsEqualSuffix(g.steps, chain)
				if g.root != nil {
					if m < len(g.steps) || len(chain) != len(g.steps) || baseVar(info, base) != g.root {
						continue
					}
					m++
				}
				if m > bestM {
					best, bestM = []*group{g}, m
				} else if m == bestM {
					best = append(best, g)
				}
			}
			if len(best) != 1 {
				continue
			}
			g := best[0]
			se := o.expr.(*ast.SelectorExpr)
			site, err := ix.site(o.pkg, o.fn, se.Sel.Pos())
			if err != nil {
				continue
			}
			rd := Read{Site: site, Selector: "." + se.Sel.Name, Kind: occKind(c, o, site), Match: bestM,
				Via: "the containing " + g.display + " value, read as a whole"}
			for _, f := range g.flags {
				out = append(out, attributed{o: o, b: &binding{flag: f}, m: bestM, tier: 3, read: rd})
			}
		}
	}
	return out
}
