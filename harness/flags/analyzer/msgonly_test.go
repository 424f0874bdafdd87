package main

import (
	"go/types"
	"sort"
	"strings"
	"testing"

	"hardwire.local/flags/analyzer/runtimeflags"
)

// TestMessageOnlyReads: in testdata/k8s.io/msgtest, the lines marked "message" (a read in a
// presenting method, into a log call's arguments only, in the condition of an if that only logs)
// are cited for no flag, and the lines marked "site" (the same shapes with an effect: a Fatal, a
// call that writes, an else, a presenter's text used as a path) are. With every occurrence's
// message mark cleared, the message lines are cited too: each is a read the rule drops.
func TestMessageOnlyReads(t *testing.T) {
	dir, prog := loadTestdata(t, "msgtest")
	marked := markedLines(fixtureLines(t, dir, "msgtest.go"), "message", "site")
	if len(marked["message"]) != 13 || len(marked["site"]) != 11 {
		t.Fatalf("fixture marks %d message and %d site lines, want 13 and 11", len(marked["message"]), len(marked["site"]))
	}
	c := component{Name: "msgtest", Dir: dir, Patterns: []string{"k8s.io/msgtest"}, Root: "k8s.io/msgtest.Root", StdFlag: true, AppPkg: "k8s.io/msgtest"}
	var rt []runtimeflags.Flag
	for _, n := range []string{"addr", "peers", "count", "name", "port", "debug", "dir", "region", "ca", "key"} {
		rt = append(rt, runtimeflags.Flag{Name: n})
	}
	cited := func(ix *index) map[int]bool {
		doc, err := analyze(ix, c, rt)
		if err != nil {
			t.Fatal(err)
		}
		out := map[int]bool{}
		for _, f := range doc.Flags {
			if f.ConsumedTotal > len(f.ConsumedAt) {
				t.Fatalf("--%s has %d reads, more than the %d cited: the fixture must stay under maxConsumed", f.Name, f.ConsumedTotal, len(f.ConsumedAt))
			}
			for _, r := range f.ConsumedAt {
				if strings.HasSuffix(r.File, "msgtest.go") {
					out[r.Line] = true
				}
			}
		}
		return out
	}
	check := func(what string, got map[int]bool, lines []int, want bool) {
		var bad []int
		for _, l := range lines {
			if got[l] != want {
				bad = append(bad, l)
			}
		}
		sort.Ints(bad)
		if len(bad) > 0 {
			t.Errorf("%s: lines %v cited %v, want %v", what, bad, !want, want)
		}
	}
	ix := buildIndex(prog)
	got := cited(ix)
	check("message lines", got, marked["message"], false)
	check("site lines", got, marked["site"], true)
	for _, occs := range []map[*types.Var][]*occ{ix.fieldOccs, ix.varOccs} {
		for _, os := range occs {
			for _, o := range os {
				o.message = false
			}
		}
	}
	check("message lines without the rule", cited(ix), marked["message"], true)
}

// markedLines: for each mark, the 1-based numbers of the lines that end in "// <mark>".
func markedLines(lines []string, marks ...string) map[string][]int {
	out := map[string][]int{}
	for i, l := range lines {
		for _, m := range marks {
			if strings.HasSuffix(l, "// "+m) {
				out[m] = append(out[m], i+1)
			}
		}
	}
	return out
}
