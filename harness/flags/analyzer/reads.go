// Finding reads: every place a flag's bound value (or a copy of it, or its name) is read, attributed
// to the flag whose binding it matches best.

package main

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"sort"
	"strings"
)

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

// wireField: a field of a generated protobuf message (a *.pb.go file). A value copied into one
// goes on the wire; its reads elsewhere are the receiver's, in another process, not this flag's.
func (ix *index) wireField(v *types.Var) bool {
	return strings.HasSuffix(ix.prog.fset.Position(v.Pos()).Filename, ".pb.go")
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

// lookupReads finds reads of flags by name: fs.Lookup("x"), fs.Changed("x"), etcd's
// flags.UniqueURLsFromFlag(fs, "x"). These read the flag without its bound object. It needs
// a.runs (entryReach).
func (a *analysis) lookupReads() ([]attributed, error) {
	ix := a.ix
	var lookups []attributed
	for _, cl := range ix.calls {
		if !a.closure[cl.pkg.PkgPath] || ix.inRegistration(cl.expr.Pos()) {
			continue
		}
		// A lookup in a function the process never calls is no read of this component's flag: the
		// linker drops it. kube-apiserver's (*BuiltInAuthorizationOptions).AddFlags looks up
		// --authorization-webhook-cache-authorized-ttl by name, a flag kube-controller-manager has
		// too, in a package kube-controller-manager imports but does not call.
		if cl.fn.obj != nil && !a.runs[cl.fn] {
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
	a.runs = a.ix.reachable(fn, a.closure)
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
		if len(steps) > 0 && ix.wireField(steps[len(steps)-1].v) {
			// etcd's name copied into a MemberList reply is read by whoever receives it (client.go's
			// Sync); only the function that fills the message in reads it here (a default for a zero).
			b.onlyIn = a.o.fn
		}
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
		if o.noSite() || claimed[o] || !closure[o.pkg.PkgPath] || ix.inRegistration(o.expr.Pos()) {
			return
		}
		info := o.pkg.TypesInfo
		best, bestM := []*binding{}, 0
		for _, b := range cands {
			if b.onlyIn != nil && o.fn != b.onlyIn {
				continue
			}
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
			if o.noSite() || o.selected || claimed[o] || !closure[o.pkg.PkgPath] || ix.inRegistration(o.expr.Pos()) {
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
