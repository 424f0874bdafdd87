package main

import (
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// loadTestdata loads the program in testdata/k8s.io/<name> (the loader keeps function bodies
// under k8s.io/…): its directory and the load.
func loadTestdata(t *testing.T, name string) (string, *program) {
	t.Helper()
	if os.Getenv("GOMODCACHE") == "" {
		t.Skip("GOMODCACHE is not set (hardwire uses $HOME/.cache/hardwire/gomod)")
	}
	dir, err := filepath.Abs(filepath.Join("testdata", "k8s.io", name))
	if err != nil {
		t.Fatal(err)
	}
	prog, err := load(dir, []string{"."})
	if err != nil {
		t.Fatal(err)
	}
	return dir, prog
}

// fixtureLines: the lines of a testdata program's file.
func fixtureLines(t *testing.T, dir, name string) []string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(src), "\n")
}

// loadRTATest loads testdata/k8s.io/rtatest and indexes it; root is its Root.
func loadRTATest(t *testing.T) (*index, *types.Func) {
	t.Helper()
	_, prog := loadTestdata(t, "rtatest")
	p := prog.byPath["k8s.io/rtatest"]
	if p == nil {
		t.Fatal("k8s.io/rtatest not loaded")
	}
	root, _ := p.Types.Scope().Lookup("Root").(*types.Func)
	return buildIndex(prog), root
}

// TestRTAConvertedOnly: an interface call reaches the methods of the types that reached code
// converts to an interface (argument, return, literal field, assignment; with a converted type's
// value fields), not of a type it only constructs, nor of one converted only in unreached code.
func TestRTAConvertedOnly(t *testing.T) {
	ix, root := loadRTATest(t)
	var got []string
	for n := range ix.reachable(root, map[string]bool{"k8s.io/rtatest": true}) {
		if n.obj != nil && n.obj.Name() == "Name" {
			got = append(got, n.name)
		}
	}
	sort.Strings(got)
	want := []string{"(*Returned).Name", "Assigned.Name", "Inner.Name", "Passed.Name", "Stored.Name"}
	if len(got) != len(want) {
		t.Fatalf("reached Name methods %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("reached Name methods %v, want %v", got, want)
		}
	}
}

// TestLookupOnlyInRunCode: a lookup by name counts as a read of the flag only in code the process
// runs; the same name looked up in another command's code of an imported package does not
// (kube-controller-manager was cited kube-apiserver's AddFlags for its webhook cache TTL flags).
func TestLookupOnlyInRunCode(t *testing.T) {
	ix, root := loadRTATest(t)
	closure := map[string]bool{"k8s.io/rtatest": true}
	a := &analysis{c: component{Name: "rtatest", Root: "k8s.io/rtatest.Root"}, ix: ix, prog: ix.prog, rootFn: root, closure: closure,
		runs: ix.reachable(root, closure), names: []string{"ttl"}, nameIdx: map[string]int{"ttl": 0}, flags: make([]FlagOut, 1)}
	lookups, err := a.lookupReads()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range lookups {
		got = append(got, l.read.Function+" "+l.read.Selector)
	}
	if len(got) != 1 || got[0] != "Flags ttlFlag" {
		t.Fatalf("lookups of --ttl %q, want [\"Flags ttlFlag\"]", got)
	}
}
