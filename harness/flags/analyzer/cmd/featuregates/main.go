// Command featuregates dumps the feature-gate spec tables of the given Go source files as JSON,
// for the upgrade plan (issue 24). Syntax only (go/ast, no type check), so it builds from the
// standard library in seconds and reads any tag in the module cache.
//
// Usage: featuregates -modcache DIR module@version/path/to/file.go ...
//
// A table is any composite literal of type map[...Feature]...VersionedSpecs (Kubernetes and its
// staging modules) or map[...Feature]...FeatureSpec (etcd, one unversioned spec per gate).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

type spec struct {
	Version       string `json:"version"`
	Default       *bool  `json:"default"`
	PreRelease    string `json:"preRelease"`
	LockToDefault bool   `json:"lockToDefault"`
	Line          int    `json:"line"`
}

type gate struct {
	Name  string `json:"name"`
	Line  int    `json:"line"`
	Specs []spec `json:"specs"`
}

type table struct {
	Module  string `json:"module"`
	Version string `json:"version"`
	File    string `json:"file"`
	Gates   []gate `json:"gates"`
}

func main() {
	modcache := flag.String("modcache", "", "the Go module cache (GOMODCACHE)")
	flag.Parse()
	var out []table
	for _, arg := range flag.Args() {
		t, err := parseTable(*modcache, arg)
		if err != nil {
			fmt.Fprintln(os.Stderr, "featuregates:", err)
			os.Exit(1)
		}
		out = append(out, t)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, "featuregates:", err)
		os.Exit(1)
	}
}

func parseTable(modcache, arg string) (table, error) {
	at := strings.Index(arg, "@")
	slash := strings.Index(arg[at+1:], "/")
	if at < 0 || slash < 0 {
		return table{}, fmt.Errorf("%q is not module@version/file", arg)
	}
	t := table{Module: arg[:at], Version: arg[at+1 : at+1+slash], File: arg[at+2+slash:]}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join(modcache, arg), nil, 0)
	if err != nil {
		return table{}, err
	}
	consts := featureConsts(f)
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.CompositeLit)
		if !ok {
			return true
		}
		mt, ok := lit.Type.(*ast.MapType)
		if !ok || !endsWith(mt.Key, "Feature") {
			return true
		}
		versioned := endsWith(mt.Value, "VersionedSpecs")
		if !versioned && !endsWith(mt.Value, "FeatureSpec") {
			return true
		}
		for _, el := range lit.Elts {
			kv, ok := el.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			g := gate{Name: gateName(kv.Key, consts), Line: fset.Position(kv.Key.Pos()).Line, Specs: []spec{}}
			if v, ok := kv.Value.(*ast.CompositeLit); ok {
				if versioned {
					for _, s := range v.Elts {
						if sl, ok := s.(*ast.CompositeLit); ok {
							g.Specs = append(g.Specs, specOf(fset, sl))
						}
					}
				} else {
					g.Specs = append(g.Specs, specOf(fset, v))
				}
			}
			t.Gates = append(t.Gates, g)
		}
		return false
	})
	if len(t.Gates) == 0 {
		return table{}, fmt.Errorf("%s: no feature-gate table", arg)
	}
	return t, nil
}

// featureConsts maps each `X Feature = "Y"` constant of the file to "Y".
func featureConsts(f *ast.File) map[string]string {
	out := map[string]string{}
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, s := range gd.Specs {
			vs := s.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if i < len(vs.Values) {
					if bl, ok := vs.Values[i].(*ast.BasicLit); ok && bl.Kind == token.STRING {
						out[name.Name], _ = strconv.Unquote(bl.Value)
					}
				}
			}
		}
	}
	return out
}

// gateName resolves a key: a constant of this file, or pkg.Name from another package, whose
// value is its name by the Kubernetes convention (the other table's own entry confirms it).
func gateName(e ast.Expr, consts map[string]string) string {
	switch k := e.(type) {
	case *ast.Ident:
		if v, ok := consts[k.Name]; ok {
			return v
		}
		return k.Name
	case *ast.SelectorExpr:
		return k.Sel.Name
	case *ast.BasicLit:
		v, _ := strconv.Unquote(k.Value)
		return v
	}
	return fmt.Sprintf("%T", e)
}

func endsWith(e ast.Expr, name string) bool {
	switch t := e.(type) {
	case *ast.Ident:
		return t.Name == name
	case *ast.SelectorExpr:
		return t.Sel.Name == name
	}
	return false
}

func specOf(fset *token.FileSet, lit *ast.CompositeLit) spec {
	s := spec{Line: fset.Position(lit.Pos()).Line}
	for _, el := range lit.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		field, _ := kv.Key.(*ast.Ident)
		if field == nil {
			continue
		}
		switch field.Name {
		case "Version":
			s.Version = versionOf(kv.Value)
		case "Default":
			b := identName(kv.Value) == "true"
			s.Default = &b
		case "LockToDefault":
			s.LockToDefault = identName(kv.Value) == "true"
		case "PreRelease":
			s.PreRelease = identName(kv.Value)
		}
	}
	return s
}

// versionOf reads version.MustParse("1.33") or version.MajorMinor(0, 0).
func versionOf(e ast.Expr) string {
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return ""
	}
	var parts []string
	for _, a := range call.Args {
		if bl, ok := a.(*ast.BasicLit); ok {
			if v, err := strconv.Unquote(bl.Value); err == nil {
				parts = append(parts, v)
			} else {
				parts = append(parts, bl.Value)
			}
		}
	}
	return strings.Join(parts, ".")
}

// identName is the last name of an identifier or selector (featuregate.GA → GA, true → true).
func identName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.Ident:
		return t.Name
	case *ast.SelectorExpr:
		return t.Sel.Name
	}
	return ""
}
