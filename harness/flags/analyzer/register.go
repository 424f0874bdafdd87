// Registration: which flags a component has (the runtime flag set, or the static candidates) and
// where each is registered, with the Go object it binds.

package main

import (
	"fmt"
	"go/types"
	"regexp"
	"sort"
	"strings"
	"unicode"

	"hardwire.local/flags/analyzer/runtimeflags"
)

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
			// A Kubernetes binary adopts some of Go's flag.CommandLine by name (cadvisor's, in the
			// kubelet's globalflags_linux.go register and kube-proxy's AddGoFlagSet): kept apart, used
			// only for a name no pflag registration has (registerFlags).
			if std {
				cands[goflagKey+r.name] = append(cands[goflagKey+r.name], r)
			}
			continue
		}
		cands[r.name] = append(cands[r.name], r)
	}
	return cands
}

// goflagKey prefixes, in candidates' map, a registration on Go's standard flag package.
const goflagKey = "goflag:"

// normalizedCands are the registrations under key+name, else under key+name with '_' for '-':
// registered so (concurrent_rc_syncs, cadvisor's storage_driver_user), a Kubernetes binary's name
// normalizer prints and accepts the flag with '-'.
func normalizedCands(cands map[string][]*reg, key, name string) []*reg {
	if rs := cands[key+name]; len(rs) > 0 {
		return rs
	}
	return cands[key+strings.ReplaceAll(name, "-", "_")]
}

// flagNames is the component's flag set, sorted. For Kubernetes it is the flags the real cobra
// command has (rt). etcd's runtime list only supplies defaults, so its set is also every name
// that newConfig registers.
func flagNames(c component, cands map[string][]*reg, rt []runtimeflags.Flag) []string {
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
func (a *analysis) registerFlags(cands map[string][]*reg, rt []runtimeflags.Flag) error {
	rtByName := map[string]runtimeflags.Flag{}
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
		rs := cands[name]
		if len(rs) == 0 && !a.c.StdFlag {
			// A pflag registration with '_', else one on Go's flag.CommandLine (candidates).
			if rs = normalizedCands(cands, "", name); len(rs) == 0 {
				rs = normalizedCands(cands, goflagKey, name)
			}
		}
		if err := a.registerFlag(i, rs, rf, hasRT, deprecated); err != nil {
			return err
		}
	}
	return nil
}

// registerFlag describes one flag: what pflag reports for it, every registration of its name
// that the component can run (the first is RegisteredAt), and the objects they bind.
func (a *analysis) registerFlag(i int, cands []*reg, rf runtimeflags.Flag, hasRT bool, deprecated map[string]string) error {
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
func chooseRegistrations(cands []*reg, rf runtimeflags.Flag, hasRT bool) []*reg {
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
func applyRuntime(f *FlagOut, rf runtimeflags.Flag) {
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
