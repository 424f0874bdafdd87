// The text of a condition as the map records it (cond.go): its every line for the reader, its Go
// expression as one line, and the operands of it that read a flag's field, so that prove can
// decide the condition on the unit's own values.

package main

import (
	"bytes"
	"go/ast"
	"go/printer"
	"go/token"
	"sort"
	"strings"
)

// lineText: the lines from pos's to end's, each trimmed, joined by one space (a single line reads
// as its excerpt does).
func (ix *index) lineText(pos, end token.Pos) string {
	from, to := ix.prog.fset.Position(pos), ix.prog.fset.Position(end)
	if !end.IsValid() || to.Line < from.Line {
		to = from
	}
	var parts []string
	for n := from.Line; n <= to.Line; n++ {
		if l := strings.TrimSpace(ix.line(from.Filename, n)); l != "" {
			parts = append(parts, l)
		}
	}
	return trimExcerpt(strings.Join(parts, " "))
}

// exprText: e as Go source on one line (comments dropped, whitespace collapsed).
func (ix *index) exprText(e ast.Expr) string {
	var b bytes.Buffer
	if err := printer.Fprint(&b, ix.prog.fset, e); err != nil {
		return ""
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// tests: the operands of e read from a flag's field (the outermost such expression), each with
// its flags.
func (c *conds) tests(e ast.Expr) map[string][]string {
	out := map[string][]string{}
	ast.Inspect(e, func(n ast.Node) bool {
		x, ok := n.(ast.Expr)
		if !ok || len(c.flagOf[x]) == 0 {
			return true
		}
		var names []string
		for f := range c.flagOf[x] {
			names = append(names, c.a.names[f])
		}
		sort.Strings(names)
		out[c.a.ix.exprText(x)] = names
		return false
	})
	if len(out) == 0 {
		return nil
	}
	return out
}
