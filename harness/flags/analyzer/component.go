// One component's analysis: registration (register.go), reads (reads.go) and their order
// (rank.go) put together into the flag map document.

package main

import (
	"fmt"
	"go/types"

	"hardwire.local/flags/analyzer/runtimeflags"
)

const maxConsumed = 8

// maxHops bounds how many copies of a flag's value are followed.
const maxHops = 3

type attributed struct {
	o    *occ
	b    *binding
	m    int
	tier int // 0 direct, 1 copied value, 2 lookup by name, 3 containing struct, 4 shared code
	read Read
	// guarded: the read is inside a branch, or in a function reached only through one (cond.go).
	guarded bool
}

// analysis is one component's run over the index of its load: the steps of analyze read it and
// fill it in, and nothing of it outlives the component.
type analysis struct {
	c      component
	ix     *index
	prog   *program
	rootFn *types.Func
	// reach: functions reachable from c.Root, where the component's registrations are.
	reach map[*funcNode]bool
	// closure: packages in the import closure of c.Patterns. Registrations, lookups and reads
	// only count there, because the index holds every command of the load.
	closure map[string]bool
	// runs: functions reachable from c.Entry (c.Root without one). Reads there rank first.
	runs     map[*funcNode]bool
	names    []string       // the flag set, sorted
	nameIdx  map[string]int // name -> index into names and flags
	flags    []FlagOut      // parallel to names
	bindings []*binding     // registered objects (tier 0) and values stored from lookups (tier 1)
	doc      *Doc
}

// analyze maps one component's flags. It finds the flag set, each flag's registration and
// bound object, then the reads of those objects: direct, through copies, by name, and of the
// containing struct. The reads are ranked so the one that acts on the value comes first.
func analyze(ix *index, c component, rt []runtimeflags.Flag) (*Doc, error) {
	a, err := newAnalysis(ix, c)
	if err != nil {
		return nil, err
	}
	cands := a.candidates()
	a.setNames(flagNames(c, cands, rt))
	a.doc = newDoc(c)
	if err := a.registerFlags(cands, rt); err != nil {
		return nil, err
	}
	if err := a.entryReach(); err != nil {
		return nil, err
	}
	lookups, err := a.lookupReads()
	if err != nil {
		return nil, err
	}
	lookups = append(lookups, ix.nameTableReads(c, a.closure, a.runs, a.nameIdx, a.names)...)

	// Direct reads (tier 0), then reads of the places those values are copied to (tier 1).
	claimed := map[*occ]bool{}
	direct, ambiguous := ix.attribute(c, a.closure, a.bindings, 0, claimed)
	viaReads := a.copiedReads(direct, ambiguous, claimed)
	handsOn := handedOn(viaReads)
	// Reads of the struct that holds the flag's field, passed on as a whole (etcd's
	// cfg.PeerTLSInfo handed to the listener): a read of every flag bound inside it.
	containerReads := ix.containerReads(c, a.closure, a.bindings, claimed)

	perFlag := byFlag(direct, viaReads, lookups, containerReads)
	conds := newConds(a, direct, viaReads)
	for i := range a.flags {
		a.summarize(i, a.rankReads(perFlag[i], handsOn, conds), ambiguous[i])
	}
	a.doc.Flags = a.flags
	if c.ConfigType != "" {
		if a.doc.Config, err = configFields(ix, c, a); err != nil {
			return nil, err
		}
	}
	return a.doc, nil
}

// newAnalysis starts a component's run from its root function. Registrations only count in
// code reachable from it, and lookups and reads only in the packages its command imports.
func newAnalysis(ix *index, c component) (*analysis, error) {
	rootFn, err := lookupFunc(ix.prog, c.Root)
	if err != nil {
		return nil, fmt.Errorf("root: %w", err)
	}
	closure := importClosure(ix.prog, c.Patterns)
	reach := ix.reachable(rootFn, closure)
	return &analysis{c: c, ix: ix, prog: ix.prog, rootFn: rootFn, reach: reach, runs: reach, closure: closure}, nil
}
