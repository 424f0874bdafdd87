package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/tools/go/packages"
)

type fileSet = *token.FileSet

// interesting reports whether a source file belongs to code whose reads we report: Kubernetes
// (k8s.io/...) and etcd (go.etcd.io/etcd/...). Function bodies of every other file are dropped
// after parsing: they cannot name a Kubernetes or etcd options field, and type-checking only
// needs their declarations. This keeps a full-syntax load of kube-apiserver within memory.
func interesting(filename string) bool {
	f := filepath.ToSlash(filename)
	// cadvisor: it registers flags on Go's flag.CommandLine that the kubelet and kube-proxy adopt by name.
	return strings.Contains(f, "/k8s.io/") || strings.Contains(f, "/go.etcd.io/etcd/") || strings.Contains(f, "/github.com/google/cadvisor@") || strings.Contains(f, "/github.com/google/cadvisor/lib@")
}

func load(dir string, patterns []string) (*program, error) {
	modcache := os.Getenv("GOMODCACHE")
	if modcache == "" {
		return nil, fmt.Errorf("set GOMODCACHE (hardwire uses $HOME/.cache/hardwire/gomod)")
	}
	fset := token.NewFileSet()
	buildFlags := []string{"-tags=providerless"}
	if mf := modfiles[dir]; mf != "" {
		buildFlags = append(buildFlags, "-modfile="+mf)
	}
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes |
			packages.NeedTypesInfo | packages.NeedImports | packages.NeedDeps | packages.NeedModule,
		Dir:        dir,
		Fset:       fset,
		Tests:      false,
		BuildFlags: buildFlags,
		Env:        append(os.Environ(), "GOFLAGS=-mod=readonly", "CGO_ENABLED=1", "GOOS=linux", "GOARCH=amd64"),
		ParseFile: func(fset *token.FileSet, filename string, src []byte) (*ast.File, error) {
			f, err := parser.ParseFile(fset, filename, src, parser.ParseComments|parser.SkipObjectResolution)
			if f != nil && !interesting(filename) {
				for _, d := range f.Decls {
					if fd, ok := d.(*ast.FuncDecl); ok {
						fd.Body = nil
					}
				}
			}
			return f, err
		},
	}
	roots, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, err
	}
	prog := &program{fset: fset, byPath: map[string]*packages.Package{}, modRoot: map[string]moduleInfo{}, srcRoot: modcache}
	var loadErrs []string
	packages.Visit(roots, nil, func(p *packages.Package) {
		prog.all = append(prog.all, p)
		prog.byPath[p.PkgPath] = p
		if p.Module != nil {
			m := p.Module
			if m.Replace != nil {
				m = m.Replace
			}
			prog.modRoot[p.PkgPath] = moduleInfo{Path: m.Path, Version: m.Version, Dir: m.Dir}
		}
		for _, e := range p.Errors {
			// Dropping the bodies of uninteresting files leaves their imports unused, which the
			// type checker reports; anything else is a real problem that would silently lose reads.
			// Dropped bodies also make the type checker complain about bodyless functions in those
			// files; only errors in the files whose bodies are kept matter.
			if !interesting(e.Pos) || strings.Contains(e.Msg, "imported and not used") || strings.Contains(e.Msg, "imported as ") && strings.Contains(e.Msg, "and not used") {
				continue
			}
			if len(loadErrs) < 20 {
				loadErrs = append(loadErrs, e.Error())
			}
		}
	})
	if len(loadErrs) > 0 {
		return nil, fmt.Errorf("load errors:\n  %s", strings.Join(loadErrs, "\n  "))
	}
	for _, r := range roots {
		if r.Module == nil {
			return nil, fmt.Errorf("%s: no module information", r.PkgPath)
		}
	}
	return prog, nil
}
