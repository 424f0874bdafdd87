package main

import (
	"fmt"
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
	rt := []runtimeflags.Flag{{Name: "auto-tls", Default: "false"}, {Name: "discovery", Default: ""}, {Name: "state", Default: "new"}, {Name: "name", Default: "default"}, {Name: "allowed", Default: ""}}
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
		{lineOf(use, 7), "", 0, ""}, // run: every run takes it, the first citation
		{lineOf(use, 4), "", 0, ""}, // started: in a branch --state's default takes
		{lineOf(use, 5), "", 0, ""}, // started: after an early return on no flag
		{lineOf(use, 1), "auto-tls", lineOf("if !cfg.AutoTLS {", 1), ""},
		{lineOf(use, 2), "discovery", lineOf(`case cfg.Discovery != "":`, 1), ""},
		{lineOf(use, 3), "state", lineOf(`if cfg.ClusterState != "new" {`, 1), "run"},
		{lineOf("cfg.AutoTLS && cfg.Name", 1), "auto-tls", lineOf("cfg.AutoTLS && cfg.Name", 1), ""},
		{lineOf(use, 6), "auto-tls,discovery", lineOf("if cfg.AutoTLS &&", 1), ""},
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
	// What prove decides on: the condition's every line, its expression (negated past an early
	// return), and each operand that reads a flag's field, --allowed's too, though the branch
	// needs it at its default.
	texts := map[int][4]string{}
	for _, r := range name.ConsumedAt {
		if c := r.Condition; c != nil {
			texts[r.Line] = [4]string{c.Text, c.Expr, strconv.FormatBool(c.Negated), fmt.Sprint(c.Tests)}
		}
	}
	for line, w := range map[int][4]string{
		lineOf(use, 6): {`if cfg.AutoTLS && cfg.Discovery != "" && len(cfg.Allowed) == 0 {`, `cfg.AutoTLS && cfg.Discovery != "" && len(cfg.Allowed) == 0`, "false",
			"map[cfg.Allowed:[allowed] cfg.AutoTLS:[auto-tls] cfg.Discovery:[discovery]]"},
		lineOf(use, 1): {"if !cfg.AutoTLS {", "!cfg.AutoTLS", "true", "map[cfg.AutoTLS:[auto-tls]]"},
		lineOf(use, 2): {`case cfg.Discovery != "":`, `cfg.Discovery != ""`, "false", "map[cfg.Discovery:[discovery]]"},
	} {
		if texts[line] != w {
			t.Errorf("line %d: condition text, expr, negated, tests %q, want %q", line, texts[line], w)
		}
	}
	// A function called in branches on two different flags: the first is named, but no one
	// expression decides it.
	mixed := false
	for _, f := range doc.Flags {
		for _, r := range f.ConsumedAt {
			if f.Name == "state" && r.Line == lineOf("use(cfg.ClusterState)", 2) {
				mixed = true
				if r.Condition == nil || r.Condition.Expr != "" || r.Condition.Tests != nil || r.Condition.Caller != "run" {
					t.Errorf("--state read at line %d in either: condition %+v, want one named, without expr or tests", r.Line, r.Condition)
				}
			}
		}
	}
	if !mixed {
		t.Errorf("--state not cited in either (line %d)", lineOf("use(cfg.ClusterState)", 2))
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
