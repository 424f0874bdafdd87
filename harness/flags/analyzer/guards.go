// Guards (issue 25): every branch a read needs inside its own function, on anything at all (a
// package variable, a local, another flag), so that prove can evaluate each one live with delve
// at its line. A miss whose guard was evaluated and never let the read run is explained by the
// run itself, not by the analyzer's say-so. cond.go keeps the subset that tests a flag, which
// prove can also decide without a lab.

package main

import "strconv"

// Guard is one branch around a read, innermost first: At is module@version/file:line of its
// condition's first line; Expr the Go expression the read needs true (false when Negated).
type Guard struct {
	At      string `json:"at"`
	Text    string `json:"text"`
	Expr    string `json:"expr"`
	Negated bool   `json:"negated,omitempty"`
}

// guards: the branches around o that a tracepoint at their line can evaluate. Left out: a case of
// a tagged switch or a select (no expression), an if whose init statement runs first on that
// line, and a condition on the read's own line (its tracepoint is the read's).
func (c *conds) guards(o *occ) []Guard {
	if o == nil || o.fn == nil {
		return nil
	}
	fset := c.a.ix.prog.fset
	line := fset.Position(o.expr.Pos()).Line
	var out []Guard
	for _, t := range c.around(o.pkg, o.expr.Pos(), o.expr.End()) {
		if t.expr == nil || t.init || fset.Position(t.pos).Line == line {
			continue
		}
		site, err := c.a.ix.site(t.pkg, t.fn, t.pos)
		if err != nil {
			continue
		}
		out = append(out, Guard{
			At:      site.Module + "@" + site.Version + "/" + site.File + ":" + strconv.Itoa(site.Line),
			Text:    c.a.ix.lineText(t.pos, t.end),
			Expr:    c.a.ix.exprText(t.expr),
			Negated: t.negated,
		})
	}
	return out
}
