// Config fields (issue 22): for a component with a config file (the kubelet's KubeletConfiguration,
// kube-proxy's KubeProxyConfiguration), every field of the versioned type the file is written in,
// where it is declared (its json-tagged line: the file's "registration"), and where the running code
// reads it. The file is decoded and converted to the internal type, so the reads are those of the
// internal type's field of the same name, found and ranked as a flag's reads are.

package main

import (
	"fmt"
	"go/types"
	"reflect"
	"strings"

	"golang.org/x/tools/go/packages"
)

// ConfigFieldOut is one field of the versioned config type; Key is its json path (authentication.x509.clientCAFile).
type ConfigFieldOut struct {
	Key     string `json:"key"`
	GoField string `json:"goField"` // the versioned type's Go field name, on the registration line
	Type    string `json:"type"`
	// The internal type's field the converted value lands in, whose reads these are.
	Field        string `json:"field"`
	Path         string `json:"path"`
	RegisteredAt *Site  `json:"registeredAt"`
	// Where a hand-written conversion copies the value into an internal field of another name
	// (kube-proxy's clusterCIDR into DetectLocal.ClusterCIDRs).
	ConvertedAt *Site `json:"convertedAt,omitempty"`
	// A flag bound to the same internal field (the flag and the field set one value).
	Flag             string `json:"flag,omitempty"`
	ReadBy           string `json:"readBy"`
	ConsumedTotal    int    `json:"consumedTotal"`
	ConsumedAt       []Read `json:"consumedAt"`
	SharedReadsTotal int    `json:"sharedReadsTotal,omitempty"`
	// Why no read is cited, when the field is not read outside validation and generated code.
	Reason string `json:"reason,omitempty"`
	// Its value when the file leaves it out, and its "Deprecated:" doc text (cfgdefaults.go).
	Default    *FieldDefault     `json:"default,omitempty"`
	Deprecated *FieldDeprecation `json:"deprecated,omitempty"`
}

type ConfigCoverage struct {
	Fields         int `json:"fields"`
	WithRead       int `json:"withRead"`
	ValidationOnly int `json:"validationOnly"`
	CopyOnly       int `json:"copyOnly"`
	NeverRead      int `json:"neverRead"`
	NoInternal     int `json:"noInternal"`
}

type ConfigDoc struct {
	Type         string           `json:"type"`         // the versioned type, pkgpath.Name
	InternalType string           `json:"internalType"` // the type the file is converted to
	Coverage     ConfigCoverage   `json:"coverage"`
	Fields       []ConfigFieldOut `json:"fields"`
}

// cfgField is one versioned field on the way to its output.
type cfgField struct {
	key, goField, goType string
	decl                 *types.Var
	steps                []step // the internal type's path; nil when it has no such field
	container            bool   // a struct whose fields are listed too: only reads of it as a whole count
	reason               string
	converted            *conversionCopy
}

const maxConfigDepth = 4

func lookupNamed(prog *program, qualified string) (*types.Named, *packages.Package, error) {
	dot := strings.LastIndex(qualified, ".")
	if dot < 0 {
		return nil, nil, fmt.Errorf("%q is not pkgpath.Type", qualified)
	}
	pkg := prog.byPath[qualified[:dot]]
	if pkg == nil {
		return nil, nil, fmt.Errorf("package %s not loaded", qualified[:dot])
	}
	tn, _ := pkg.Types.Scope().Lookup(qualified[dot+1:]).(*types.TypeName)
	if tn == nil {
		return nil, nil, fmt.Errorf("type %s not found", qualified)
	}
	n, ok := types.Unalias(tn.Type()).(*types.Named)
	if !ok {
		return nil, nil, fmt.Errorf("%s is not a named type", qualified)
	}
	return n, pkg, nil
}

func deref(t types.Type) types.Type {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		return p.Elem()
	}
	return t
}

// nested: a struct type whose fields the file spells out one by one. Not apimachinery's
// (metav1.Duration), nor a type that decodes itself (logsapi.TimeOrMetaDuration).
func nested(t types.Type) (*types.Struct, bool) {
	n, ok := types.Unalias(deref(t)).(*types.Named)
	if !ok || n.Obj().Pkg() == nil {
		return nil, false
	}
	p := n.Obj().Pkg().Path()
	if !strings.HasPrefix(p, "k8s.io/") || strings.HasPrefix(p, "k8s.io/apimachinery/") || oneFieldStruct(n) {
		return nil, false
	}
	if types.NewMethodSet(types.NewPointer(n)).Lookup(nil, "UnmarshalJSON") != nil {
		return nil, false
	}
	st, ok := n.Underlying().(*types.Struct)
	return st, ok
}

func fieldByName(st *types.Struct, name string) *types.Var {
	for i := 0; i < st.NumFields(); i++ {
		if st.Field(i).Name() == name {
			return st.Field(i)
		}
	}
	return nil
}

// configFieldList walks the versioned struct (vst) beside the internal one (iowner, nil once the
// internal type has no counterpart), depth first in declaration order.
func configFieldList(conv map[*types.Var]*conversionCopy, prefix string, vst *types.Struct, iowner types.Type, isteps []step, depth int) []cfgField {
	var out []cfgField
	var ist *types.Struct
	if iowner != nil {
		ist, _ = deref(iowner).Underlying().(*types.Struct)
	}
	for i := 0; i < vst.NumFields(); i++ {
		f := vst.Field(i)
		name, _, _ := strings.Cut(reflect.StructTag(vst.Tag(i)).Get("json"), ",")
		if f.Embedded() || name == "-" || !f.Exported() {
			continue // TypeMeta (inline), fields the file cannot set
		}
		if name == "" {
			name = f.Name()
		}
		cf := cfgField{key: prefix + name, goField: f.Name(), goType: typeShort(f.Type()), decl: f}
		var ifield *types.Var
		if ist != nil {
			ifield = fieldByName(ist, f.Name())
		}
		switch cc := conv[f.Origin()]; {
		case ifield != nil:
			// The generated conversion copies same-named fields.
			cf.steps = append(append([]step(nil), isteps...), step{v: ifield.Origin(), owner: deref(iowner)})
		case cc != nil:
			cf.steps, cf.converted = cc.steps, cc
			ifield = cc.steps[len(cc.steps)-1].v
		case ist == nil:
			cf.reason = "its enclosing struct has no counterpart in the internal type"
		default:
			cf.reason = fmt.Sprintf("the internal type %s has no field %s, and no conversion function copies it into another", ownerName(deref(iowner)), f.Name())
		}
		st, isNested := nested(f.Type())
		cf.container = isNested && depth < maxConfigDepth
		out = append(out, cf)
		if cf.container {
			var inner types.Type
			if ifield != nil {
				if _, ok := nested(ifield.Type()); ok {
					inner = ifield.Type()
				}
			}
			out = append(out, configFieldList(conv, cf.key+".", st, inner, cf.steps, depth+1)...)
		}
	}
	return out
}

// configFields maps the component's config fields. It runs the flags' read finding over bindings
// of the internal type's fields: direct reads, reads through copies, reads of the containing
// struct, ranked the same way.
func configFields(ix *index, c component, flags *analysis) (*ConfigDoc, error) {
	vt, vpkg, err := lookupNamed(ix.prog, c.ConfigType)
	if err != nil {
		return nil, fmt.Errorf("configType: %w", err)
	}
	it, _, err := lookupNamed(ix.prog, c.InternalConfigType)
	if err != nil {
		return nil, fmt.Errorf("internalConfigType: %w", err)
	}
	vst, ok := vt.Underlying().(*types.Struct)
	if !ok {
		return nil, fmt.Errorf("%s is not a struct", c.ConfigType)
	}
	list := configFieldList(ix.conversionCopies(vt.Obj().Pkg().Path(), it.Obj().Pkg().Path()), "", vst, it, nil, 0)
	defaults, deprecated, err := ix.configDefaults(vt, list)
	if err != nil {
		return nil, err
	}

	a, err := newAnalysis(ix, c)
	if err != nil {
		return nil, err
	}
	if err := a.entryReach(); err != nil {
		return nil, err
	}
	a.doc = &Doc{}
	a.flags = make([]FlagOut, len(list))
	for i, cf := range list {
		if cf.steps == nil {
			continue
		}
		b := &binding{flag: i, steps: cf.steps}
		b.display, b.path = describe(cf.steps, nil)
		a.flags[i].Field, a.flags[i].Path = b.display, b.path
		a.bindings = append(a.bindings, b)
	}

	claimed := map[*occ]bool{}
	direct, ambiguous := ix.attribute(c, a.closure, a.bindings, 0, claimed)
	viaReads := a.copiedReads(direct, ambiguous, claimed)
	handsOn := handedOn(viaReads)
	// A container's own reads (kc.Authentication handed on) are also reads of each field in it:
	// the claims of the containers' direct reads must not hide them.
	containerReads := ix.containerReads(c, a.closure, a.bindings, map[*occ]bool{})

	perField := byFlag(direct, viaReads, containerReads)
	doc := &ConfigDoc{Type: c.ConfigType, InternalType: c.InternalConfigType, Fields: []ConfigFieldOut{}}
	for i, cf := range list {
		reads := perField[i]
		if cf.container {
			// kc.Authentication.X509 selects further: a read of X509, not of Authentication as a whole.
			reads = wholeReads(reads)
		}
		a.summarize(i, a.rankReads(reads, handsOn, nil), ambiguous[i])
		f := a.flags[i]
		for j := range f.ConsumedAt {
			// attribute's words are the flags': here the bindings are config fields.
			if v := f.ConsumedAt[j].Via; strings.HasSuffix(v, " flags") {
				f.ConsumedAt[j].Via = strings.TrimSuffix(v, " flags") + " config fields"
			}
		}
		site, err := ix.site(vpkg, nil, cf.decl.Pos())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", cf.key, err)
		}
		out := ConfigFieldOut{Key: cf.key, GoField: cf.goField, Type: cf.goType, Field: f.Field, Path: f.Path, RegisteredAt: &site,
			Flag: flags.twin(cf.steps), ReadBy: f.ReadBy, ConsumedTotal: f.ConsumedTotal, ConsumedAt: f.ConsumedAt, SharedReadsTotal: f.SharedReadsTotal,
			Default: defaults[cf.key], Deprecated: deprecated[cf.key]}
		if out.ConsumedAt == nil {
			out.ConsumedAt = []Read{}
		}
		if cf.converted != nil {
			at, err := ix.site(cf.converted.pkg, cf.converted.fn, cf.converted.pos)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", cf.key, err)
			}
			out.ConvertedAt = &at
		}
		out.Reason = cf.reason
		if out.Reason == "" {
			out.Reason = readReason(c, out)
		}
		doc.Coverage.add(out)
		doc.Fields = append(doc.Fields, out)
	}
	return doc, nil
}

// twin is the flag bound to the internal field at steps, if one is: a flag bound to
// o.config.BindAddress (kube-proxy) or c.Authentication.X509.ClientCAFile (kubelet) sets the same value.
func (a *analysis) twin(steps []step) string {
	if len(steps) == 0 {
		return ""
	}
	for _, b := range a.bindings {
		bs := b.steps
		if n := len(bs); n >= 2 && oneFieldStruct(bs[n-1].owner) {
			bs = bs[:n-1] // DurationVar(&o.config.Linux.Conntrack.TCPEstablishedTimeout.Duration)
		}
		if b.tier == 0 && stepsEqualSuffix(bs, steps) == len(steps) {
			return a.names[b.flag]
		}
	}
	return ""
}

func wholeReads(reads []attributed) []attributed {
	var out []attributed
	for _, r := range reads {
		if r.o == nil || !r.o.selected {
			out = append(out, r)
		}
	}
	return out
}

// readReason says why a field has no read to cite first, in the words the flags' gaps use.
func readReason(c component, f ConfigFieldOut) string {
	switch f.ReadBy {
	case "validation-only":
		return "only validation reads " + f.Path
	case "copy-only":
		return "only generated code (conversion, defaults, deep copy) reads " + f.Path
	case "none":
		return "no read of " + f.Path + " in the packages " + c.Patterns[0] + " imports"
	}
	return ""
}

func (cov *ConfigCoverage) add(f ConfigFieldOut) {
	cov.Fields++
	switch {
	case f.Path == "":
		cov.NoInternal++
	case f.ReadBy == "read":
		cov.WithRead++
	case f.ReadBy == "validation-only":
		cov.ValidationOnly++
	case f.ReadBy == "copy-only":
		cov.CopyOnly++
	default:
		cov.NeverRead++
	}
}

func (cov ConfigCoverage) String() string {
	return fmt.Sprintf("config fields %d: read %d, validation-only %d, copy-only %d, never read %d, no internal field %d",
		cov.Fields, cov.WithRead, cov.ValidationOnly, cov.CopyOnly, cov.NeverRead, cov.NoInternal)
}
