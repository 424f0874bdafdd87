// Ranking: the order a flag's reads are cited in (the read that acts on the value first), and what
// a flag's reads add up to.

package main

import (
	"fmt"
	"sort"
	"strings"
)

// readClass orders reads: meaningful direct or copied reads, then reads of the containing
// struct, then validation, then generated conversion/deep-copy code.
func readClass(a attributed) int {
	switch a.read.Kind {
	case "validation":
		return 2
	case "generated":
		return 3
	case "log":
		return 1
	}
	if a.tier >= 3 {
		return 1
	}
	return 0
}

// plumbing: the read only copies the value into a field or variable of the same name
// (cfg.AuthToken = o.AuthToken): the reads further on explain the flag better.
func plumbing(r Read) bool {
	if r.CopyTo == "" {
		return false
	}
	src := strings.ToLower(strings.TrimPrefix(r.Selector, "."))
	dst := r.CopyTo
	if i := strings.LastIndex(dst, "."); i >= 0 {
		dst = dst[i+1:]
	}
	dst = strings.ToLower(dst)
	return src != "" && dst != "" && (strings.Contains(src, dst) || strings.Contains(dst, src))
}

// promoteDownstream puts, in front of each plumbing copy, the best read of the place it copies
// to (following further plumbing copies): the code that acts on the value, not the line that
// moves it. The order is otherwise unchanged.
func promoteDownstream(sorted []attributed) []attributed {
	children := map[*occ][]int{}
	for i, a := range sorted {
		if a.b.src != nil {
			children[a.b.src] = append(children[a.b.src], i)
		}
	}
	// The first downstream use that hands the value to a call (loads the file, builds the
	// client), else the first downstream use at all.
	guardedOK := false // first look for a downstream read outside any branch (cond.go), then any
	var walk func(o *occ, depth int, arg bool) int
	walk = func(o *occ, depth int, arg bool) int {
		if depth > maxHops {
			return -1
		}
		for _, i := range children[o] {
			a := sorted[i]
			if readClass(a) != 0 || a.read.Condition != nil {
				continue // the downstream read put first must be one every run takes
			}
			if !plumbing(a.read) && (!arg || a.o.arg) && (guardedOK || !a.guarded) {
				return i
			}
			if j := walk(a.o, depth+1, arg); j >= 0 {
				return j
			}
		}
		return -1
	}
	use := func(o *occ) int {
		for _, g := range []bool{false, true} {
			guardedOK = g
			if j := walk(o, 1, true); j >= 0 {
				return j
			}
			if j := walk(o, 1, false); j >= 0 {
				return j
			}
		}
		return -1
	}
	out := make([]attributed, 0, len(sorted))
	done := make([]bool, len(sorted))
	for i, a := range sorted {
		if done[i] {
			continue
		}
		if a.o != nil && plumbing(a.read) && readClass(a) == 0 {
			if j := use(a.o); j >= 0 && !done[j] {
				out = append(out, sorted[j])
				done[j] = true
			}
		}
		out = append(out, a)
		done[i] = true
	}
	return out
}

// rankReads orders a flag's reads so that the first is the line that acts on the value. Then
// promoteDownstream puts the read each plumbing copy leads to in front of that copy. Reads in
// functions the process never calls are left out: the linker drops those functions, so no run
// can reach the line (cloud-controller-manager's ApplyTo in a shared module; (*PathOptions)
// methods that only kubectl's code makes reachable). Reads that run only with another flag set
// (conds, cond.go; nil for config fields) rank after the others.
func (a *analysis) rankReads(reads []attributed, handsOn map[*occ]bool, conds *conds) []attributed {
	run := reads[:0:0]
	for _, r := range reads {
		if !a.unreached(r) {
			if conds != nil {
				r.read.Condition, r.guarded = conds.of(r.o, r.b.flag)
				r.read.Guards = conds.guards(r.o)
			}
			run = append(run, r)
		}
	}
	sort.SliceStable(run, func(x, y int) bool { return a.readBefore(run[x], run[y], handsOn) })
	return promoteDownstream(run)
}

// readBefore is the ranking. It puts the read class first, then the kind of code, the tier, and
// reads whose value is handed on. Then come uses before checks, a hand-off to another module,
// plain reads before pointers, and the longer match. Position decides last.
func (a *analysis) readBefore(x, y attributed, handsOn map[*occ]bool) bool {
	rx, ry := x.read, y.read
	if qx, qy := rx.Condition != nil, ry.Condition != nil; qx != qy {
		return qy // a read every run takes before one that needs another flag set
	}
	if cx, cy := readClass(x), readClass(y); cx != cy {
		return cx < cy
	}
	kx, ky := kindRank[rx.Kind], kindRank[ry.Kind]
	if kx != ky {
		return kx < ky
	}
	if x.tier != y.tier {
		return x.tier < y.tier
	}
	if hx, hy := handsOn[x.o], handsOn[y.o]; hx != hy {
		return hx
	}
	if qx, qy := x.o != nil && x.o.cond, y.o != nil && y.o.cond; qx != qy {
		return qy // `if len(x) > 0` checks the value; `for _, m := range x` uses it
	}
	if hx, hy := a.ix.handsToOtherModule(x), a.ix.handsToOtherModule(y); hx != hy {
		return hx // Endpoints: c.ServerList into clientv3.Config: the library that connects
	}
	if ax, ay := x.o != nil && x.o.addr, y.o != nil && y.o.addr; ax != ay {
		return ay // a pointer handed out may be a write: after plain reads
	}
	if rx.Match != ry.Match {
		return rx.Match > ry.Match
	}
	if x.guarded != y.guarded {
		return y.guarded // a read outside any branch (cond.go) before one a run may skip
	}
	if rx.Module != ry.Module {
		return rx.Module < ry.Module
	}
	if rx.File != ry.File {
		return rx.File < ry.File
	}
	if rx.Line != ry.Line {
		return rx.Line < ry.Line
	}
	return rx.Col < ry.Col
}

// unreached: the read is in a function the component's process never calls.
func (a *analysis) unreached(r attributed) bool {
	return r.o != nil && r.o.fn != nil && r.o.fn.obj != nil && !a.runs[r.o.fn]
}

// summarize writes flag i's ranked reads into its output. That is at most maxConsumed
// citations, the totals, how the flag is read, and its count in the coverage.
func (a *analysis) summarize(i int, reads []attributed, shared int) {
	f := &a.flags[i]
	uniq := citations(reads)
	f.ConsumedTotal = len(uniq)
	f.SharedReadsTotal = shared
	if len(uniq) > maxConsumed {
		uniq = uniq[:maxConsumed]
	}
	f.ConsumedAt = append(f.ConsumedAt, uniq...)
	f.ReadBy = readBy(reads)
	if f.Binding == "" {
		f.Binding = "none"
	}
	a.doc.Coverage.add(f)
}

// citations keeps the first read of each line, because a citation is a line.
func citations(reads []attributed) []Read {
	seen := map[string]bool{}
	var uniq []Read
	for _, a := range reads {
		k := fmt.Sprintf("%s/%s:%d", a.read.Module, a.read.File, a.read.Line)
		if seen[k] {
			continue
		}
		seen[k] = true
		uniq = append(uniq, a.read)
	}
	return uniq
}

// readBy classifies a flag by its reads. It is "read" when any read is outside validation and
// generated code. Otherwise it is validation-only, else copy-only (generated conversions), else
// none.
func readBy(reads []attributed) string {
	by := "none"
	hasValidation, hasGenerated := false, false
	for _, a := range reads {
		switch a.read.Kind {
		case "validation":
			hasValidation = true
		case "generated":
			hasGenerated = true
		default:
			by = "read"
		}
	}
	if by == "none" && hasValidation {
		return "validation-only"
	} else if by == "none" && hasGenerated {
		return "copy-only"
	}
	return by
}

// add counts one flag in the coverage table.
func (cov *Coverage) add(f *FlagOut) {
	cov.Flags++
	if f.RegisteredAt == nil {
		cov.Unregistered++
		return
	}
	cov.Registered++
	switch f.ReadBy {
	case "read":
		cov.WithRead++
	case "validation-only":
		cov.ValidationOnly++
	case "copy-only":
		cov.CopyOnly++
	default:
		cov.NeverRead++
	}
}
