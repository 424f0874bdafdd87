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

type progCache struct {
	ix   *index
	regs []*reg
}

var caches = map[*program]*progCache{}

func cacheFor(prog *program) *progCache {
	pc := caches[prog]
	if pc == nil {
		ix := buildIndex(prog)
		pc = &progCache{ix: ix, regs: ix.findRegistrations()}
		caches[prog] = pc
	}
	return pc
}

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
	steps, _, kind := flowTarget(a.o)
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

func analyze(prog *program, c component, rt []runtimeFlag) (*Doc, error) {
	pc := cacheFor(prog)
	ix := pc.ix
	rootFn, err := lookupFunc(prog, c.Root)
	if err != nil {
		return nil, fmt.Errorf("root: %w", err)
	}
	reach := ix.reachable(rootFn)

	// Packages in the component's import closure: lookups by name only count there.
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
	for _, pat := range c.Patterns {
		if p := prog.byPath[pat]; p != nil {
			visit(p)
		}
	}

	cands := map[string][]*reg{}
	for _, r := range pc.regs {
		if !closure[r.call.pkg.PkgPath] {
			continue
		}
		// Package-level variable initializers always run; functions must be reachable.
		if r.call.fn.obj != nil && !reach[r.call.fn] {
			continue
		}
		std := r.callee.Pkg().Path() == "flag"
		if std != c.StdFlag {
			continue
		}
		cands[r.name] = append(cands[r.name], r)
	}
	rtByName := map[string]runtimeFlag{}
	for _, f := range rt {
		rtByName[f.Name] = f
	}
	var names []string
	if c.StdFlag {
		// etcd: the flag set is what newConfig registers; the runtime list only supplies defaults.
		seen := map[string]bool{}
		for n := range cands {
			seen[n] = true
		}
		for n := range rtByName {
			seen[n] = true
		}
		names = sortedKeys(seen)
	} else {
		for _, f := range rt {
			names = append(names, f.Name)
		}
		sort.Strings(names)
	}

	doc := &Doc{Component: c.Name, KubernetesVersion: kubernetesVersion, Root: c.Root, Gaps: []string{}}
	doc.ComponentVersion = kubernetesVersion
	doc.Method = "flag set: pflag FlagSet of the command built by " + c.Root + " (via cmd/k8sflags); sources: static analysis with go/packages"
	if c.StdFlag {
		doc.ComponentVersion = etcdVersion
		doc.Method = "flag set: flag registrations reachable from " + c.Root + "; defaults: embed.Config.AddFlags at runtime (etcd/cmd/etcdflags); sources: static analysis with go/packages"
	}
	deprecatedEtcd := map[string]string{}
	if c.StdFlag {
		deprecatedEtcd = stringMapVar(prog.byPath[rootFn.Pkg().Path()], "deprecatedFlags")
	}

	flags := make([]FlagOut, len(names))
	var bindings []*binding
	for i, name := range names {
		f := &flags[i]
		f.Name = name
		f.ConsumedAt = []Read{}
		rf, hasRT := rtByName[name]
		rs := append([]*reg(nil), cands[name]...)
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
		if hasRT {
			f.Shorthand, f.Type, f.Default, f.Help, f.Hidden = rf.Shorthand, rf.Type, rf.Default, rf.Help, rf.Hidden
			if rf.Deprecated != "" {
				f.Deprecated, f.DeprecatedMessage = true, rf.Deprecated
			}
		}
		if msg, ok := deprecatedEtcd[name]; ok {
			f.Deprecated, f.DeprecatedMessage = true, msg
		}
		if len(rs) == 0 {
			f.Binding, f.ReadBy = "none", "none"
			doc.Gaps = append(doc.Gaps, fmt.Sprintf("--%s: no registration with a constant name found in code reachable from %s", name, c.Root))
			continue
		}
		if len(rs) > 1 {
			doc.Gaps = append(doc.Gaps, fmt.Sprintf("--%s: %d registrations with this name are reachable; all are listed and their bound objects all count", name, len(rs)))
		}
		for j, r := range rs {
			var reg Registration
			if r.inner != r.call {
				// Registered by a helper: cite the pflag/flag call, and the call site that passes
				// the constant name.
				site, err := ix.site(r.inner.pkg, r.inner.fn, r.inner.expr.Pos())
				if err != nil {
					return nil, err
				}
				from, err := ix.site(r.call.pkg, r.call.fn, r.nameArg.Pos())
				if err != nil {
					return nil, err
				}
				reg = Registration{Site: site, Call: qualifiedFunc(r.callee), Via: r.via, CalledFrom: &from, NameArg: r.nameValue, NameFormat: r.format}
			} else {
				site, err := ix.site(r.call.pkg, r.call.fn, r.nameArg.Pos())
				if err != nil {
					return nil, err
				}
				reg = Registration{Site: site, Call: qualifiedFunc(r.callee)}
			}
			if id := constIdent(r.call.pkg.TypesInfo, r.nameArg); id != nil {
				cs, err := ix.site(r.call.pkg, nil, id.Pos())
				if err == nil {
					reg.NameConst = &ConstRef{Ident: id.Name(), Site: cs}
				}
			}
			if j == 0 {
				f.RegisteredAt = &reg
			} else {
				f.AlsoRegisteredAt = append(f.AlsoRegisteredAt, reg)
			}
			if !hasRT {
				f.Type = staticType(r)
				f.Help = r.usage
				if d, ok := constString(r.call.pkg.TypesInfo, r.defExpr); ok {
					f.Default = d
				} else if r.defExpr != nil {
					if tv, ok := r.call.pkg.TypesInfo.Types[r.defExpr]; ok && tv.Value != nil {
						f.Default = tv.Value.ExactString()
					} else {
						f.DefaultNote = "not a constant: " + exprString(prog.fset, r.defExpr)
					}
				} else {
					f.DefaultNote = "set by the flag.Value constructor"
				}
			} else if c.StdFlag && f.Type == "" {
				f.Type = staticType(r)
			}
			steps, root, kind := resolveBound(r.boundPkg.TypesInfo, r.bound, 0)
			if r.boundIsResult {
				steps, root, kind = pathOf(r.boundPkg.TypesInfo, r.bound)
			}
			if r.bound == nil && r.call.flowTo != nil {
				steps, root, kind = pathOf(r.call.pkg.TypesInfo, r.call.flowTo)
			}
			if len(r.prefix) > 0 && kind == "field" {
				steps = append(append([]step(nil), r.prefix...), steps...)
				root = r.prefixRoot
			}
			if f.Binding == "" || f.Binding == "value" || f.Binding == "none" {
				f.Binding = kind
			}
			if kind == "field" || kind == "variable" {
				b := &binding{flag: i, steps: steps, rootVar: root}
				b.display, b.path = describe(steps, root)
				if f.Field == "" {
					f.Field, f.Path = b.display, b.path
				}
				bindings = append(bindings, b)
			}
		}
	}

	// Lookups by name: fs.Lookup("x"), fs.Changed("x"), etcd's flags.UniqueURLsFromFlag(fs, "x").
	nameIdx := map[string]int{}
	for i, n := range names {
		nameIdx[n] = i
	}
	var lookups []attributed
	for _, cl := range ix.calls {
		if !closure[cl.pkg.PkgPath] || ix.inRegistration(cl.expr.Pos()) {
			continue
		}
		callee := calleeOf(cl.pkg.TypesInfo, cl.expr)
		if callee == nil || !isLookup(callee) {
			continue
		}
		for _, a := range cl.expr.Args {
			s, ok := constString(cl.pkg.TypesInfo, a)
			if !ok {
				continue
			}
			i, ok := nameIdx[s]
			if !ok {
				continue
			}
			site, err := ix.site(cl.pkg, cl.fn, a.Pos())
			if err != nil {
				return nil, err
			}
			sel := fmt.Sprintf("%q", s)
			if id := constIdent(cl.pkg.TypesInfo, a); id != nil {
				sel = id.Name()
			}
			rd := Read{Site: site, Selector: sel, Kind: readKind(c, cl.pkg.PkgPath, site.File, cl.fn.name), Match: 0, Via: "lookup by name: " + qualifiedFunc(callee)}
			lookups = append(lookups, attributed{b: &binding{flag: i}, tier: 2, read: rd})
			if cl.flowTo != nil {
				steps, root, kind := pathOf(cl.pkg.TypesInfo, cl.flowTo)
				if kind == "field" || kind == "variable" {
					b := &binding{flag: i, tier: 1, steps: steps, rootVar: root}
					b.display, b.path = describe(steps, root)
					b.via = b.display
					bindings = append(bindings, b)
					if flags[i].Binding != "field" && flags[i].Binding != "variable" {
						flags[i].Binding = "lookup"
						if flags[i].Field == "" {
							flags[i].Field, flags[i].Path = b.display, b.path
						}
					}
				}
			}
		}
	}

	runs := reach
	if c.Entry != "" {
		fn, err := lookupFunc(prog, c.Entry)
		if err != nil {
			return nil, err
		}
		runs = ix.reachable(fn)
	}
	lookups = append(lookups, ix.nameTableReads(c, closure, runs, nameIdx, names)...)

	// Direct reads (tier 0), then reads of the places those values are copied to (tier 1).
	claimed := map[*occ]bool{}
	direct, ambiguous := ix.attribute(c, closure, bindings, 0, claimed)
	// Values are often copied several times before use (options -> Config -> GenericAPIServer):
	// follow copies up to maxHops, so the read that acts on the value is found too.
	seenFlow := map[string]bool{}
	flowsFrom := func(reads []attributed) []*binding {
		var flows []*binding
		for _, a := range reads {
			if a.o == nil || a.o.flowTo == nil || a.o.write || a.tier == 4 {
				continue
			}
			steps, root, kind := flowTarget(a.o)
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
			if seenFlow[key] {
				continue
			}
			seenFlow[key] = true
			flows = append(flows, b)
		}
		return flows
	}
	flows := flowsFrom(direct)
	for _, b := range bindings {
		if b.tier == 1 {
			b.hop = 1
			flows = append(flows, b)
		}
	}
	var viaReads []attributed
	amb1 := map[int]int{}
	for hop := 1; hop <= maxHops && len(flows) > 0; hop++ {
		got, amb := ix.attribute(c, closure, flows, 1, claimed)
		for i, n := range amb {
			amb1[i] += n
		}
		viaReads = append(viaReads, got...)
		flows = flowsFrom(got)
	}
	// A read whose value is handed on to code that reads it again explains the flag best.
	handsOn := map[*occ]bool{}
	for _, a := range viaReads {
		if a.b.src != nil {
			handsOn[a.b.src] = true
		}
	}
	for i, n := range amb1 {
		ambiguous[i] += n
	}

	// Reads of the struct that holds the flag's field, passed on as a whole (etcd's
	// cfg.PeerTLSInfo handed to the listener): a read of every flag bound inside it.
	containerReads := ix.containerReads(c, closure, bindings, claimed)

	perFlag := map[int][]attributed{}
	for _, list := range [][]attributed{direct, viaReads, lookups, containerReads} {
		for _, a := range list {
			perFlag[a.b.flag] = append(perFlag[a.b.flag], a)
		}
	}
	unreached := func(a attributed) bool { return a.o != nil && a.o.fn != nil && a.o.fn.obj != nil && !runs[a.o.fn] }
	for i := range flags {
		f := &flags[i]
		reads := perFlag[i]
		sort.SliceStable(reads, func(x, y int) bool {
			rx, ry := reads[x].read, reads[y].read
			if cx, cy := readClass(reads[x]), readClass(reads[y]); cx != cy {
				return cx < cy
			}
			// Code the component's command never calls (cloud-controller-manager's ApplyTo in a
			// shared module) may read the same config type: after code it does call.
			if ux, uy := unreached(reads[x]), unreached(reads[y]); ux != uy {
				return uy
			}
			kx, ky := kindRank[rx.Kind], kindRank[ry.Kind]
			if kx != ky {
				return kx < ky
			}
			if reads[x].tier != reads[y].tier {
				return reads[x].tier < reads[y].tier
			}
			if hx, hy := handsOn[reads[x].o], handsOn[reads[y].o]; hx != hy {
				return hx
			}
			if qx, qy := reads[x].o != nil && reads[x].o.cond, reads[y].o != nil && reads[y].o.cond; qx != qy {
				return qy // `if len(x) > 0` checks the value; `for _, m := range x` uses it
			}
			if hx, hy := ix.handsToOtherModule(reads[x]), ix.handsToOtherModule(reads[y]); hx != hy {
				return hx // Endpoints: c.ServerList into clientv3.Config: the library that connects
			}
			if ax, ay := reads[x].o != nil && reads[x].o.addr, reads[y].o != nil && reads[y].o.addr; ax != ay {
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
		})
		reads = promoteDownstream(reads)
		// One citation per line.
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
		f.ConsumedTotal = len(uniq)
		f.SharedReadsTotal = ambiguous[i]
		if len(uniq) > maxConsumed {
			uniq = uniq[:maxConsumed]
		}
		f.ConsumedAt = append(f.ConsumedAt, uniq...)
		f.ReadBy = "none"
		hasValidation, hasGenerated := false, false
		for _, a := range reads {
			switch a.read.Kind {
			case "validation":
				hasValidation = true
			case "generated":
				hasGenerated = true
			default:
				f.ReadBy = "read"
			}
		}
		if f.ReadBy == "none" && hasValidation {
			f.ReadBy = "validation-only"
		} else if f.ReadBy == "none" && hasGenerated {
			f.ReadBy = "copy-only"
		}
		if f.Binding == "" {
			f.Binding = "none"
		}
		cov := &doc.Coverage
		cov.Flags++
		if f.RegisteredAt == nil {
			cov.Unregistered++
			continue
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
	doc.Flags = flags
	return doc, nil
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
			if steps, root, kind := flowTarget(o); kind == "field" || kind == "variable" {
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

func flowTarget(o *occ) ([]step, *types.Var, string) {
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
	return pathOf(info, o.flowTo)
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
