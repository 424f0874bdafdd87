package main

import (
	"strconv"
	"strings"
	"testing"

	"hardwire.local/flags/analyzer/runtimeflags"
)

// TestConditionalReads: testdata/k8s.io/condtest reads --name in branches that need another flag
// set (an early return on --auto-tls, a case on --discovery, a function called only when --state
// is not its default, the right side of an && on --auto-tls) and in branches any run may take.
// The conditional reads carry their condition and rank after the others; the first citation is
// the read every run takes.
func TestConditionalReads(t *testing.T) {
	dir, prog := loadTestdata(t, "condtest")
	c := component{Name: "condtest", Dir: dir, Patterns: []string{"k8s.io/condtest"}, Root: "k8s.io/condtest.Root", StdFlag: true, AppPkg: "k8s.io/condtest"}
	rt := []runtimeflags.Flag{{Name: "auto-tls", Default: "false"}, {Name: "discovery", Default: ""}, {Name: "state", Default: "new"}, {Name: "name", Default: "default"}}
	doc, err := analyze(buildIndex(prog), c, rt)
	if err != nil {
		t.Fatal(err)
	}
	lines := fixtureLines(t, dir, "condtest.go")
	// The line of the n-th (1-based) line of the fixture that holds text, read from the source.
	lineOf := func(text string, n int) int {
		for i, l := range lines {
			if strings.Contains(l, text) {
				if n--; n == 0 {
					return i + 1
				}
			}
		}
		t.Fatalf("fixture has no line %q", text)
		return 0
	}
	var name *FlagOut
	for i := range doc.Flags {
		if doc.Flags[i].Name == "name" {
			name = &doc.Flags[i]
		}
	}
	if name == nil {
		t.Fatal("no --name in the map")
	}
	type want struct {
		line int
		flag string // "" for a read with no condition
		at   int
		call string
	}
	use := "use(cfg.Name)"
	wants := []want{
		{lineOf(use, 6), "", 0, ""}, // run: every run takes it, the first citation
		{lineOf(use, 4), "", 0, ""}, // started: in a branch --state's default takes
		{lineOf(use, 5), "", 0, ""}, // started: after an early return on no flag
		{lineOf(use, 1), "auto-tls", lineOf("if !cfg.AutoTLS {", 1), ""},
		{lineOf(use, 2), "discovery", lineOf(`case cfg.Discovery != "":`, 1), ""},
		{lineOf(use, 3), "state", lineOf(`if cfg.ClusterState != "new" {`, 1), "run"},
		{lineOf("cfg.AutoTLS && cfg.Name", 1), "auto-tls", lineOf("cfg.AutoTLS && cfg.Name", 1), ""},
	}
	if len(name.ConsumedAt) != len(wants) {
		t.Fatalf("--name cited at %d reads, want %d: %+v", len(name.ConsumedAt), len(wants), name.ConsumedAt)
	}
	for i, w := range wants {
		r := name.ConsumedAt[i]
		got := "no condition"
		if r.Condition != nil {
			got = strings.Join(r.Condition.Flags, ",") + " at " + r.Condition.At + " caller " + r.Condition.Caller
		}
		if r.Line != w.line {
			t.Errorf("--name citation %d is line %d (%s), want line %d", i, r.Line, got, w.line)
			continue
		}
		if w.flag == "" {
			if r.Condition != nil {
				t.Errorf("line %d: condition %s, want none", r.Line, got)
			}
			continue
		}
		if r.Condition == nil || strings.Join(r.Condition.Flags, ",") != w.flag || !strings.HasSuffix(r.Condition.At, "/condtest.go:"+strconv.Itoa(w.at)) || r.Condition.Caller != w.call {
			t.Errorf("line %d: condition %s, want %s at condtest.go:%d caller %q", r.Line, got, w.flag, w.at, w.call)
		}
	}
	// --auto-tls's own read after its own early return is not conditional on itself.
	own := lineOf("useBool(cfg.AutoTLS)", 1)
	found := false
	for _, f := range doc.Flags {
		for _, r := range f.ConsumedAt {
			if f.Name == "auto-tls" && r.Line == own {
				found = true
				if r.Condition != nil {
					t.Errorf("--auto-tls read at line %d conditional on %v", r.Line, r.Condition.Flags)
				}
			}
		}
	}
	if !found {
		t.Errorf("--auto-tls not cited at line %d", own)
	}
}
