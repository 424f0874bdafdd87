// Command analyzer builds hardwire's flag map (issue 6): for every flag a pinned component
// registers, where it is registered, the Go object the flag value is bound to, and where that
// object is read.
//
// It loads the component's command package with golang.org/x/tools/go/packages and full type
// information, finds flag registrations (pflag/flag *Var, *VarP, Var, and helpers that forward a
// constant name to them), resolves the pointer argument to an access path of struct fields, and
// matches every field selection in the loaded Kubernetes/etcd packages against those paths.
//
// Usage (run from this directory, GOMODCACHE set as for every hardwire Go command):
//
//	go run . -out ../data/v1.36.3 -runtime /tmp/k8sflags.json -etcd-runtime /tmp/etcdflags.json
//
// The runtime files come from ./cmd/k8sflags and ./etcd/cmd/etcdflags: they list the flags each
// command really has, with pflag's own type/default/help/deprecated/hidden values. Source
// locations and read sites come only from the static analysis below.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/tools/go/packages"
	"hardwire.local/flags/analyzer/runtimeflags"
)

// The versions analyzed. The defaults are the ones go.mod here and in ./etcd pin; another version
// comes with its own module files (-modfile, -etcd-modfile, -node-modfile: go.v1.37.2.mod,
// etcd/go.v3.7.0.mod, node/go.v1.37.2.mod).
var (
	kubernetesVersion = "v1.36.3"
	stagingVersion    = "v0.36.3"
	etcdVersion       = "v3.6.8"
	// modfiles maps a component's module directory to the -modfile its go list runs with.
	modfiles = map[string]string{}
)

// One component to analyze. The list comes from hardwire's component registry (each spec's
// flagTarget), written as JSON by flags/regenerate.ts and passed with -targets.
type component struct {
	Name     string   `json:"name"`
	Dir      string   `json:"dir"`      // module directory to load from (relative to the analyzer)
	Patterns []string `json:"patterns"` // package patterns to load
	Root     string   `json:"root"`     // function whose call graph holds the flag registrations: pkgpath.Func
	Entry    string   `json:"entry"`    // function whose call graph the process runs, for ranking reads (default Root)
	StdFlag  bool     `json:"stdFlag"`  // registers with the standard library flag package (etcd)
	AppPkg   string   `json:"appPkg"`   // package prefix counted as the component's own app code when ranking reads
	// The config file's versioned type and the internal type it is converted to (pkgpath.Type), for
	// a component that reads one (config.go).
	ConfigType         string `json:"configType"`
	InternalConfigType string `json:"internalConfigType"`
}

func main() {
	out := flag.String("out", "", "directory for <component>.json (required)")
	runtimeFile := flag.String("runtime", "", "JSON from ./cmd/k8sflags (required for Kubernetes components)")
	etcdRuntimeFile := flag.String("etcd-runtime", "", "JSON from ./etcd/cmd/etcdflags (required for etcd)")
	nodeRuntimeFile := flag.String("node-runtime", "", "JSON from ./node/cmd/nodeflags (required for kubelet and kube-proxy)")
	targetsFile := flag.String("targets", "", "JSON list of the components to analyze, from the registry (required)")
	only := flag.String("component", "", "analyze only this component")
	flag.StringVar(&kubernetesVersion, "kubernetes-version", kubernetesVersion, "Kubernetes version the module files pin")
	flag.StringVar(&etcdVersion, "etcd-version", etcdVersion, "etcd version the etcd module file pins")
	k8sModfile := flag.String("modfile", "", "module file for the Kubernetes components (default go.mod)")
	etcdModfile := flag.String("etcd-modfile", "", "module file for etcd, relative to ./etcd (default etcd/go.mod)")
	nodeModfile := flag.String("node-modfile", "", "module file for the kubelet and kube-proxy, relative to ./node (default node/go.mod)")
	flag.Parse()
	// k8s.io/kubernetes v1.X.Y publishes its staging modules as v0.X.Y.
	stagingVersion = "v0." + strings.TrimPrefix(kubernetesVersion, "v1.")
	if *k8sModfile != "" {
		modfiles["."] = *k8sModfile
	}
	if *etcdModfile != "" {
		modfiles["etcd"] = *etcdModfile
	}
	if *nodeModfile != "" {
		modfiles["node"] = *nodeModfile
	}
	if *out == "" || *targetsFile == "" {
		fmt.Fprintln(os.Stderr, "analyzer: -out and -targets are required")
		os.Exit(2)
	}
	var components []component
	if b, err := os.ReadFile(*targetsFile); err != nil {
		fatal(err)
	} else if err := json.Unmarshal(b, &components); err != nil {
		fatal(fmt.Errorf("%s: %w", *targetsFile, err))
	}
	runtime := runtimeflags.Doc{}
	for _, f := range []string{*runtimeFile, *etcdRuntimeFile, *nodeRuntimeFile} {
		if f == "" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			fatal(err)
		}
		var m runtimeflags.Doc
		if err := json.Unmarshal(b, &m); err != nil {
			fatal(fmt.Errorf("%s: %w", f, err))
		}
		for k, v := range m {
			runtime[k] = v
		}
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fatal(err)
	}

	// Kubernetes components share one load: the three command packages share most of their code.
	groups := map[string][]component{}
	var order []string
	for _, c := range components {
		if *only != "" && c.Name != *only {
			continue
		}
		if _, ok := groups[c.Dir]; !ok {
			order = append(order, c.Dir)
		}
		groups[c.Dir] = append(groups[c.Dir], c)
	}
	for _, dir := range order {
		cs := groups[dir]
		var patterns []string
		for _, c := range cs {
			patterns = append(patterns, c.Patterns...)
		}
		start := time.Now()
		prog, err := load(dir, patterns)
		if err != nil {
			fatal(err)
		}
		fmt.Fprintf(os.Stderr, "analyzer: loaded %d packages from %s in %s\n", len(prog.all), dir, time.Since(start).Round(time.Millisecond))
		start = time.Now()
		ix := buildIndex(prog)
		fmt.Fprintf(os.Stderr, "analyzer: indexed %s: %d functions, %d registrations in %s\n", dir, len(ix.funcs), len(ix.regs), time.Since(start).Round(time.Millisecond))
		for _, c := range cs {
			rt, ok := runtime[c.Name]
			if !ok {
				fatal(fmt.Errorf("no runtime flag list for %s (pass -runtime/-etcd-runtime/-node-runtime)", c.Name))
			}
			start := time.Now()
			doc, err := analyze(ix, c, rt)
			if err != nil {
				fatal(fmt.Errorf("%s: %w", c.Name, err))
			}
			b, err := json.MarshalIndent(doc, "", "  ")
			if err != nil {
				fatal(err)
			}
			path := filepath.Join(*out, c.Name+".json")
			if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
				fatal(err)
			}
			fmt.Fprintf(os.Stderr, "analyzer: %s: %d flags (%s) -> %s in %s\n", c.Name, len(doc.Flags), doc.Coverage.String(), path, time.Since(start).Round(time.Millisecond))
			if doc.Config != nil {
				fmt.Fprintf(os.Stderr, "analyzer: %s: %s\n", c.Name, doc.Config.Coverage.String())
			}
		}
	}
}

func fatal(err error) {
	fmt.Fprintf(os.Stderr, "analyzer: %v\n", err)
	os.Exit(1)
}

// program is one packages.Load result with the indexes the analysis needs.
type program struct {
	fset    fileSet
	all     []*packages.Package
	byPath  map[string]*packages.Package
	modRoot map[string]moduleInfo // package path -> module it belongs to
	srcRoot string                // GOMODCACHE
}

type moduleInfo struct {
	Path, Version, Dir string
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func trimExcerpt(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 200 {
		s = s[:197] + "..."
	}
	return s
}
