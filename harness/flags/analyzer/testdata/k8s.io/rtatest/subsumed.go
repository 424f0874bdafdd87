package rtatest

import (
	"fmt"
	"path"
)

// Opts stands for a component's options, each field bound to a flag.
type Opts struct {
	MaxAge   int
	CertFile string
	KeyFile  string
	Dir      string
}

// Validate: the conditions read MaxAge; the first message only formats it (no site of its own),
// the second formats it under a check of another field (a site).
func (o *Opts) Validate() []error {
	var errs []error
	if o.MaxAge < 0 {
		errs = append(errs, fmt.Errorf("--max-age %v can't be a negative number", o.MaxAge)) // subsumed
	}
	if o.Dir == "" {
		errs = append(errs, fmt.Errorf("--max-age %v needs --dir", o.MaxAge)) // site
	}
	return errs
}

// Default returns at once when either file is set: past the guard both are empty, or hold what
// it wrote from Dir. A read in a closure is left alone.
func (o *Opts) Default() (func() string, error) {
	if len(o.CertFile) != 0 || o.KeyFile != "" {
		return nil, nil
	}
	o.CertFile = path.Join(o.Dir, "a.crt")
	if o.CertFile == "x" { // subsumed
		return nil, fmt.Errorf("%s", o.KeyFile) // subsumed
	}
	return func() string { return o.CertFile }, nil // site
}

// Use: a guard that does not return for a set value (&&) subsumes nothing after it.
func (o *Opts) Use() string {
	if len(o.CertFile) != 0 && o.Dir == "" {
		return ""
	}
	return o.CertFile // site
}
