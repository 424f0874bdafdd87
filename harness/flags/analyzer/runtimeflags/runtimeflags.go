// Package runtimeflags is the JSON contract between the analyzer's two programs: the dumpers
// (cmd/k8sflags, etcd/cmd/etcdflags) print the flag set each pinned command really has, and the
// analyzer reads it (-runtime, -etcd-runtime) as ground truth for which flags exist and for their
// type, default, help, deprecated and hidden state.
package runtimeflags

// Flag is one flag as its command registers it at run time. etcd's standard-library flag set has
// no shorthand, type, deprecation or hiding, so etcdflags fills Name, Default and Help only.
type Flag struct {
	Name                string `json:"name"`
	Shorthand           string `json:"shorthand,omitempty"`
	Type                string `json:"type,omitempty"`
	Default             string `json:"default"`
	Help                string `json:"help"`
	Deprecated          string `json:"deprecated,omitempty"`
	ShorthandDeprecated string `json:"shorthandDeprecated,omitempty"`
	Hidden              bool   `json:"hidden,omitempty"`
}

// Doc is what a dumper prints: each component's flags, by component name.
type Doc map[string][]Flag
