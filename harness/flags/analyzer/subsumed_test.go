package main

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

// TestSubsumedReads: the lines marked "subsumed" in testdata/k8s.io/rtatest/subsumed.go are no
// read site of their own (an error message of a check on the same field; past a return taken
// whenever the field is set), the lines marked "site" are.
func TestSubsumedReads(t *testing.T) {
	ix, _ := loadRTATest(t)
	var got, want []string
	seen := map[string]bool{}
	for _, occs := range ix.fieldOccs {
		for _, o := range occs {
			pos := ix.prog.fset.Position(o.expr.Pos())
			if !strings.HasSuffix(pos.Filename, "subsumed.go") || o.write {
				continue
			}
			line := ix.line(pos.Filename, pos.Line)
			key := fmt.Sprintf("%d %v", pos.Line, o.subsumed)
			if seen[key] {
				continue
			}
			seen[key] = true
			if strings.HasSuffix(line, "// subsumed") || strings.HasSuffix(line, "// site") {
				got = append(got, key)
				want = append(want, fmt.Sprintf("%d %v", pos.Line, strings.HasSuffix(line, "// subsumed")))
			} else if o.subsumed {
				got = append(got, key)
				want = append(want, fmt.Sprintf("%d false", pos.Line))
			}
		}
	}
	sort.Strings(got)
	sort.Strings(want)
	if len(got) != 6 || strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("subsumed by line %q, want %q (6 marked lines)", got, want)
	}
}
