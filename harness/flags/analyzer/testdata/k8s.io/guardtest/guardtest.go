// Package guardtest is guards_test.go's program: reads of --name behind branches on anything (a
// package variable, another flag, an early return), one behind an if whose init statement runs
// first on its line, and --name copied into a protobuf message (member.pb.go), whose reads are
// the receiver's. The directory is named k8s.io/… so that the loader keeps function bodies.
package guardtest

import "flag"

type Config struct {
	Name    string
	Verbose bool
}

var defaultHost string

func use(string) {}

func lookup() (string, bool) { return "", false }

func outer(cfg *Config) {
	if defaultHost == "" {
		if cfg.Verbose {
			use(cfg.Name) // nested
		}
		return
	}
	use(cfg.Name) // after
}

func initIf(cfg *Config) {
	if h, ok := lookup(); ok && h != "" {
		use(cfg.Name) // init
	}
}

func send(cfg *Config) *Member {
	m := &Member{Name: cfg.Name}
	if m.Name == "" { // filled
		m.Name = "default"
	}
	return m
}

func receive(m *Member) {
	use(m.Name) // wire
}

func Root(args []string) {
	cfg := &Config{}
	fs := flag.NewFlagSet("guardtest", flag.ContinueOnError)
	fs.StringVar(&cfg.Name, "name", "default", "member name")
	fs.BoolVar(&cfg.Verbose, "verbose", false, "say more")
	_ = fs.Parse(args)
	outer(cfg)
	initIf(cfg)
	receive(send(cfg))
}
