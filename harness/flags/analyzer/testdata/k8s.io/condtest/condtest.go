// Package condtest is cond_test.go's program: reads of --name that run only when another flag is
// set (conditional), one that runs in a branch any run may take (guarded), and one every run takes.
// The directory is named k8s.io/… so that the loader keeps its function bodies (load.go).
package condtest

import "flag"

type Config struct {
	AutoTLS      bool
	Discovery    string
	ClusterState string
	Name         string
	Peers        []string
	Allowed      string
}

func use(string) {}

func useBool(bool) {}

// selfCert reads the name only after the early return that --auto-tls (default false) skips.
func selfCert(cfg *Config) {
	if !cfg.AutoTLS {
		return
	}
	use(cfg.Name)
	useBool(cfg.AutoTLS)
}

// peerMap reads it in the case of a discovery URL (default "").
func peerMap(cfg *Config) {
	switch {
	case cfg.Discovery != "":
		use(cfg.Name)
	default:
		use(cfg.ClusterState)
	}
}

// join runs only when --state is not its default "new".
func join(cfg *Config) {
	use(cfg.Name)
}

// started: --state at its default takes this branch; so does any run with no peers.
func started(cfg *Config) {
	if cfg.ClusterState == "new" {
		use(cfg.Name)
	}
	if len(cfg.Peers) == 0 {
		return
	}
	use(cfg.Name)
}

// validate reads it behind one condition over three lines, whose last operand needs --allowed
// at its default (empty).
func validate(cfg *Config) {
	if cfg.AutoTLS &&
		cfg.Discovery != "" &&
		len(cfg.Allowed) == 0 {
		use(cfg.Name)
	}
}

// either runs when --auto-tls is set, and when --discovery is: no one condition decides it.
func either(cfg *Config) {
	use(cfg.ClusterState)
}

func run(cfg *Config) {
	selfCert(cfg)
	peerMap(cfg)
	if cfg.ClusterState != "new" {
		join(cfg)
	}
	started(cfg)
	validate(cfg)
	if cfg.AutoTLS {
		either(cfg)
	}
	if cfg.Discovery != "" {
		either(cfg)
	}
	if cfg.AutoTLS && cfg.Name != "" {
		use(cfg.Discovery)
	}
	use(cfg.Name)
}

func Root(args []string) {
	cfg := &Config{}
	fs := flag.NewFlagSet("condtest", flag.ContinueOnError)
	fs.BoolVar(&cfg.AutoTLS, "auto-tls", false, "make certificates")
	fs.StringVar(&cfg.Discovery, "discovery", "", "discovery URL")
	fs.StringVar(&cfg.ClusterState, "state", "new", "new or existing")
	fs.StringVar(&cfg.Name, "name", "default", "member name")
	fs.StringVar(&cfg.Allowed, "allowed", "", "allowed names")
	_ = fs.Parse(args)
	run(cfg)
}
