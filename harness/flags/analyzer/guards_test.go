package main

import (
	"fmt"
	"strconv"
	"testing"

	"hardwire.local/flags/analyzer/runtimeflags"
)

// TestGuards: in testdata/k8s.io/guardtest, each read of --name carries the branches around it in
// its own function, innermost first, with the sense the read needs (an early return's negated),
// on a package variable as well as on another flag; an if whose init statement runs first on its
// line carries none; and --name copied into a protobuf message is cited where the function that
// fills the message in reads it, not where another function reads the message (the receiver's
// read, etcd's client.go Sync).
func TestGuards(t *testing.T) {
	dir, prog := loadTestdata(t, "guardtest")
	c := component{Name: "guardtest", Dir: dir, Patterns: []string{"k8s.io/guardtest"}, Root: "k8s.io/guardtest.Root", StdFlag: true, AppPkg: "k8s.io/guardtest"}
	rt := []runtimeflags.Flag{{Name: "name", Default: "default"}, {Name: "verbose", Default: "false"}}
	doc, err := analyze(buildIndex(prog), c, rt)
	if err != nil {
		t.Fatal(err)
	}
	marked := markedLines(fixtureLines(t, dir, "guardtest.go"), "nested", "after", "init", "wire", "filled")
	line := func(mark string) int {
		if len(marked[mark]) != 1 {
			t.Fatalf("fixture marks %d lines %q, want 1", len(marked[mark]), mark)
		}
		return marked[mark][0]
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
	got := map[int]string{}
	for _, r := range name.ConsumedAt {
		s := ""
		for _, g := range r.Guards {
			s += fmt.Sprintf("[%s|%s|%v]", g.At[len(g.At)-len("guardtest.go:")-2:], g.Expr, g.Negated)
		}
		got[r.Line] = s
	}
	at := func(n int) string { return "guardtest.go:" + strconv.Itoa(n) }
	want := map[int]string{
		line("nested"): "[" + at(line("nested")-1) + "|cfg.Verbose|false][" + at(line("nested")-2) + `|defaultHost == ""|false]`,
		line("after"):  "[" + at(line("nested")-2) + `|defaultHost == ""|true]`,
		line("init"):   "",
	}
	for l, w := range want {
		g, ok := got[l]
		if !ok {
			t.Errorf("--name not cited at line %d", l)
		} else if g != w {
			t.Errorf("line %d: guards %s, want %s", l, g, w)
		}
	}
	if g, ok := got[line("wire")]; ok {
		t.Errorf("--name cited at line %d (%s), a read of the protobuf message it was copied into", line("wire"), g)
	}
	if _, ok := got[line("filled")]; !ok {
		t.Errorf("--name not cited at line %d, where the function that fills the protobuf message in reads it", line("filled"))
	}
}
