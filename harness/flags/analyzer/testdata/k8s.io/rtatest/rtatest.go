// Package rtatest is rta_test.go's program: which Name methods an interface call reaches.
// The directory is named k8s.io/… so that the loader keeps its function bodies (load.go).
package rtatest

type Namer interface{ Name() string }

// Built is constructed, never converted to an interface: Namer.Name cannot reach it.
type Built struct{ n string }

func (Built) Name() string { return "built" }

// Passed becomes a Namer as a call's argument.
type Passed struct{}

func (Passed) Name() string { return "passed" }

// Returned becomes a Namer in a return statement.
type Returned struct{}

func (*Returned) Name() string { return "returned" }

// Stored becomes a Namer in a composite literal's interface field.
type Stored struct{}

func (Stored) Name() string { return "stored" }

// Assigned becomes a Namer by an assignment; Inner, a value field of it, with it.
type Assigned struct{ in Inner }

func (Assigned) Name() string { return "assigned" }

type Inner struct{}

func (Inner) Name() string { return "inner" }

// Unreached is converted only in code Root never calls.
type Unreached struct{}

func (Unreached) Name() string { return "unreached" }

type holder struct{ n Namer }

func use(n Namer) string { return n.Name() }

func returned() Namer { return &Returned{} }

func never() Namer { return Unreached{} }

func Root() {
	Flags(nil)
	b := Built{n: "x"}
	_ = b.n
	use(Passed{})
	_ = returned()
	_ = holder{n: Stored{}}
	var n Namer
	n = Assigned{}
	_ = n
}
