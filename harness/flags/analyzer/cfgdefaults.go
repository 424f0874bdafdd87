// Config fields' defaults and deprecations (issue 24): for each field of the versioned config
// type, the value it gets when the file leaves it out, and its "Deprecated:" doc text, each cited.
// The default is the assignment in the versioned package's SetDefaults_<Type> (defaults.go), the
// code that really runs when the file is decoded; a field that function never assigns falls back
// to its doc comment's "Default:" line, which is what the type's authors say.

package main

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// FieldDefault is one config field's default and where it is set or stated.
type FieldDefault struct {
	Value string `json:"value"`
	// "defaults": an assignment in SetDefaults_<Type>; "doc": the field's "Default:" comment line.
	From string `json:"from"`
	// For "defaults": the assigned expression as written, when Value had to be worked out from it.
	Expr string `json:"expr,omitempty"`
	// For "defaults": how many assignments SetDefaults_<Type> makes to the field (more than one: conditional; At cites the first).
	Assignments int  `json:"assignments,omitempty"`
	At          Site `json:"at"`
}

// FieldDeprecation is the field's "Deprecated:" paragraph, cited at its first line.
type FieldDeprecation struct {
	Message string `json:"message"`
	At      Site   `json:"at"`
}

var (
	reDefaultDoc    = regexp.MustCompile(`^//\s*Default:\s*(.*)$`)
	reDeprecatedDoc = regexp.MustCompile(`^//\s*Deprecated:\s*(.*)$`)
	// A line that starts another part of the doc: "Default: 14", "+optional".
	reDocMarker = regexp.MustCompile(`^(\+|[A-Z][A-Za-z]*:\s)`)
)

// configDefaults finds each listed field's default and deprecation. root is the versioned type.
func (ix *index) configDefaults(root *types.Named, list []cfgField) (map[string]*FieldDefault, map[string]*FieldDeprecation, error) {
	defaults, err := ix.setDefaults(root, list)
	if err != nil {
		return nil, nil, err
	}
	deprecated := map[string]*FieldDeprecation{}
	fields := map[string]map[token.Pos]*ast.Field{}
	for _, cf := range list {
		pkgPath := cf.decl.Pkg().Path()
		if fields[pkgPath] == nil {
			fields[pkgPath] = structFields(ix, pkgPath)
		}
		af := fields[pkgPath][cf.decl.Pos()]
		if af == nil || af.Doc == nil {
			continue
		}
		p := ix.prog.byPath[pkgPath]
		if defaults[cf.key] == nil {
			if text, pos := docParagraph(af.Doc, reDefaultDoc, false); pos.IsValid() {
				at, err := ix.site(p, nil, pos)
				if err != nil {
					return nil, nil, fmt.Errorf("%s default: %w", cf.key, err)
				}
				defaults[cf.key] = &FieldDefault{Value: text, From: "doc", At: at}
			}
		}
		if text, pos := docParagraph(af.Doc, reDeprecatedDoc, true); pos.IsValid() {
			at, err := ix.site(p, nil, pos)
			if err != nil {
				return nil, nil, fmt.Errorf("%s deprecation: %w", cf.key, err)
			}
			deprecated[cf.key] = &FieldDeprecation{Message: text, At: at}
		}
	}
	return defaults, deprecated, nil
}

// structFields maps each struct field name's position in a package to its declaration (with its doc comment).
func structFields(ix *index, pkgPath string) map[token.Pos]*ast.Field {
	out := map[token.Pos]*ast.Field{}
	p := ix.prog.byPath[pkgPath]
	if p == nil {
		return out
	}
	for _, f := range p.Syntax {
		ast.Inspect(f, func(n ast.Node) bool {
			if st, ok := n.(*ast.StructType); ok {
				for _, fld := range st.Fields.List {
					for _, name := range fld.Names {
						out[name.Pos()] = fld
					}
				}
			}
			return true
		})
	}
	return out
}

// docParagraph finds the first `// <Marker>: text` line of a doc comment: its text (with the lines
// that continue its paragraph when whole is set, up to a blank line or the next marker) and its
// position. A marker with nothing after it takes what is below it: the indented block (evictionHard's
// four thresholds, joined with ", "), else the one next line that is not another marker.
func docParagraph(doc *ast.CommentGroup, re *regexp.Regexp, whole bool) (string, token.Pos) {
	for i, c := range doc.List {
		m := re.FindStringSubmatch(c.Text)
		if m == nil {
			continue
		}
		first := strings.TrimSpace(m[1])
		if whole {
			parts := []string{first}
			for _, next := range doc.List[i+1:] {
				t := strings.TrimSpace(strings.TrimPrefix(next.Text, "//"))
				if t == "" || strings.HasPrefix(next.Text, "/*") || reDocMarker.MatchString(t) {
					break
				}
				parts = append(parts, t)
			}
			return strings.TrimSpace(strings.Join(parts, " ")), c.Slash
		}
		if first != "" {
			return first, c.Slash
		}
		var block []string
		for _, next := range doc.List[i+1:] {
			raw := strings.TrimPrefix(next.Text, "//")
			t := strings.TrimSpace(raw)
			indented := strings.HasPrefix(raw, "  ") || strings.HasPrefix(raw, "\t")
			if t == "" || strings.HasPrefix(next.Text, "/*") || (len(block) > 0 && !indented) || (!indented && reDocMarker.MatchString(t)) {
				break
			}
			block = append(block, t)
			if !indented {
				break
			}
		}
		return strings.Join(block, ", "), c.Slash
	}
	return "", token.NoPos
}

// setDefaults reads SetDefaults_<T> for the root type and each nested struct type the list walks
// into: each `obj.A.B = value` whose obj is the function's parameter sets the key its json names spell.
func (ix *index) setDefaults(root *types.Named, list []cfgField) (map[string]*FieldDefault, error) {
	prefixes := map[*types.TypeName][]string{root.Obj(): {""}}
	keys := map[string]bool{}
	for _, cf := range list {
		keys[cf.key] = true
		if n, ok := types.Unalias(deref(cf.decl.Type())).(*types.Named); ok && cf.container {
			prefixes[n.Origin().Obj()] = append(prefixes[n.Origin().Obj()], cf.key+".")
		}
	}
	out := map[string]*FieldDefault{}
	for _, obj := range sortedFuncs(ix.funcs) {
		fn := ix.funcs[obj]
		sig, _ := obj.Type().(*types.Signature)
		if fn.decl == nil || fn.decl.Body == nil || sig == nil || sig.Params().Len() != 1 || !strings.HasPrefix(obj.Name(), "SetDefaults_") {
			continue
		}
		param := sig.Params().At(0)
		n, ok := types.Unalias(deref(param.Type())).(*types.Named)
		if !ok || obj.Name() != "SetDefaults_"+n.Obj().Name() {
			continue
		}
		for _, prefix := range prefixes[n.Origin().Obj()] {
			if err := ix.defaultsIn(fn, param, prefix, keys, out); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

func (ix *index) defaultsIn(fn *funcNode, param *types.Var, prefix string, keys map[string]bool, out map[string]*FieldDefault) error {
	info := fn.pkg.TypesInfo
	locals := localDefs(info, fn.decl.Body)
	var err error
	ast.Inspect(fn.decl.Body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || err != nil || as.Tok != token.ASSIGN || len(as.Lhs) != len(as.Rhs) {
			return true
		}
		for i, l := range as.Lhs {
			steps, base := chainOf(info, l)
			if len(steps) == 0 || baseVar(info, base) != param {
				continue
			}
			key := stepsKey(prefix, steps, keys)
			if key == "" {
				continue
			}
			if d := out[key]; d != nil {
				d.Assignments++
				continue
			}
			at, e := ix.site(fn.pkg, fn, l.Pos())
			if e != nil {
				err = fmt.Errorf("%s default: %w", key, e)
				return false
			}
			expr := exprString(ix.prog.fset, as.Rhs[i])
			d := &FieldDefault{Value: defaultValue(info, as.Rhs[i], locals, ix.prog.fset, 0), From: "defaults", Assignments: 1, At: at}
			if d.Value != expr {
				d.Expr = expr
			}
			out[key] = d
		}
		return true
	})
	return err
}

// stepsKey spells a selector chain as the json key it sets: the longest listed key it starts with,
// past which only apimachinery's value wrappers may follow (obj.ConfigSyncPeriod.Duration).
func stepsKey(prefix string, steps []step, keys map[string]bool) string {
	key := strings.TrimSuffix(prefix, ".")
	for i, s := range steps {
		st, ok := deref(s.owner).Underlying().(*types.Struct)
		if !ok {
			return ""
		}
		name := ""
		for j := 0; j < st.NumFields(); j++ {
			if st.Field(j).Origin() == s.v.Origin() {
				name, _, _ = strings.Cut(reflect.StructTag(st.Tag(j)).Get("json"), ",")
			}
		}
		if name == "" || name == "-" {
			name = s.v.Name()
		}
		next := name
		if key != "" {
			next = key + "." + name
		}
		if !keys[next] {
			if i > 0 && keys[key] && onlyWrappers(steps[i:]) {
				return key
			}
			return ""
		}
		key = next
	}
	return key
}

func onlyWrappers(steps []step) bool {
	for _, s := range steps {
		n, ok := types.Unalias(deref(s.owner)).(*types.Named)
		if !ok || n.Obj().Pkg() == nil || !strings.HasPrefix(n.Obj().Pkg().Path(), "k8s.io/apimachinery/") {
			return false
		}
	}
	return true
}

// localDefs maps each local variable defined once with `x := value` to its value (temp := int32(14)).
func localDefs(info *types.Info, body *ast.BlockStmt) map[*types.Var]ast.Expr {
	out := map[*types.Var]ast.Expr{}
	ast.Inspect(body, func(n ast.Node) bool {
		if as, ok := n.(*ast.AssignStmt); ok && as.Tok == token.DEFINE && len(as.Lhs) == len(as.Rhs) {
			for i, l := range as.Lhs {
				if id, ok := l.(*ast.Ident); ok {
					if v, ok := info.Defs[id].(*types.Var); ok {
						out[v] = as.Rhs[i]
					}
				}
			}
		}
		return true
	})
	return out
}

// defaultValue is the value an expression sets, worked out where it is a constant behind a
// pointer helper (ptr.To), an & of a local, or a value wrapper (metav1.Duration{Duration: c});
// otherwise the expression as written.
func defaultValue(info *types.Info, e ast.Expr, locals map[*types.Var]ast.Expr, fset *token.FileSet, depth int) string {
	e = ast.Unparen(e)
	if tv, ok := info.Types[e]; ok && tv.Value != nil {
		return constValue(tv)
	}
	if depth < 4 {
		switch x := e.(type) {
		case *ast.CallExpr:
			if f := calleeOf(info, x); f != nil && f.Pkg() != nil && len(x.Args) == 1 && (f.Pkg().Path() == "k8s.io/utils/ptr" || f.Pkg().Path() == "k8s.io/utils/pointer") {
				return defaultValue(info, x.Args[0], locals, fset, depth+1)
			}
		case *ast.UnaryExpr:
			if x.Op == token.AND {
				return defaultValue(info, x.X, locals, fset, depth+1)
			}
		case *ast.Ident:
			if v, ok := info.Uses[x].(*types.Var); ok && locals[v] != nil {
				return defaultValue(info, locals[v], locals, fset, depth+1)
			}
		case *ast.CompositeLit:
			if len(x.Elts) == 1 && oneFieldStruct(info.TypeOf(x)) {
				el := x.Elts[0]
				if kv, ok := el.(*ast.KeyValueExpr); ok {
					el = kv.Value
				}
				return defaultValue(info, el, locals, fset, depth+1)
			}
		}
	}
	return exprString(fset, e)
}

func constValue(tv types.TypeAndValue) string {
	v := tv.Value
	if n, ok := types.Unalias(tv.Type).(*types.Named); ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "time" && n.Obj().Name() == "Duration" {
		if d, exact := constant.Int64Val(constant.ToInt(v)); exact {
			return time.Duration(d).String()
		}
	}
	switch v.Kind() {
	case constant.String:
		return strconv.Quote(constant.StringVal(v))
	case constant.Float:
		f, _ := constant.Float64Val(v)
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return v.ExactString()
}
