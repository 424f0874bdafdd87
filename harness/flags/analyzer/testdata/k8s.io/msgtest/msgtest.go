// Package msgtest is msgonly_test.go's program: reads of flags that only make a message (marked
// "// message": no read site, msgonly.go) and reads of the same shapes that act on the value
// ("// site"). The directory is named k8s.io/… so that the loader keeps its function bodies.
package msgtest

import (
	"context"
	"flag"
	"fmt"
	"os"

	"go.uber.org/zap"
	"k8s.io/klog/v2"
)

type TLS struct {
	CA  string
	Key string
}

// Empty only compares (pure.go).
func (t TLS) Empty() bool { return t.CA == "" && t.Key == "" }

type Config struct {
	Addr   string
	Peers  string
	Count  uint64
	Name   string
	Port   int
	Debug  bool
	Dir    string
	Region string
	TLS    TLS
	lg     *zap.Logger
}

var touched uint64

// touch and record write a package variable: calls with an effect. label only computes.
func touch() bool            { touched++; return true }
func record(s string) string { touched++; return s }
func label(s string) string  { return "<" + s + ">" }
func serve(string)           {}
func enableDebug()           {}

// (a) Methods that present their receiver.
type cacheKey struct {
	ca   string
	name string
}

func (k cacheKey) String() string                { return "ca:" + k.ca } // message
func (k cacheKey) GoString() string              { return k.name }       // message
func (k cacheKey) Format(s fmt.State, verb rune) { fmt.Fprint(s, k.ca) } // message

type confErr struct{ region string }

func (e confErr) Error() string { return "bad region " + e.region } // message

// dirKey's text is a path the program creates: its String acts on the value.
type dirKey struct{ dir string }

func (d dirKey) String() string { return d.dir } // site

// portKey's String takes an argument: not the method fmt calls, though its text is only logged.
type portKey struct{ port int }

func (p portKey) String(verbose bool) string { return fmt.Sprint(p.port) } // site

// show calls the methods fmt would call, as fmt does: through its interfaces.
func show(g fmt.GoStringer, f fmt.Formatter, st fmt.State) {
	klog.Info(g.GoString())
	f.Format(st, 'v')
}

func present(cfg *Config) {
	k := cacheKey{ca: cfg.TLS.CA, name: cfg.Name}
	klog.InfoS("transport", "key", k)
	show(k, k, nil)
	var err error = confErr{region: cfg.Region}
	klog.ErrorS(err, "config")
	d := dirKey{dir: cfg.Dir}
	_ = os.MkdirAll(d.String(), 0o700)
	p := portKey{port: cfg.Port}
	klog.Info(p.String(true))
}

// (b) Reads that only feed a log call's arguments, and ones that do more.
func logArgs(cfg *Config) {
	klog.InfoS("listening", "addr", cfg.Addr)                                      // message
	klog.V(2).Infof("peers %v", cfg.Peers)                                         // message
	cfg.lg.Info("snapshot", zap.Uint64("count", cfg.Count))                        // message
	klog.FromContext(context.Background()).Info("member", "name", label(cfg.Name)) // message
	klog.Info(fmt.Sprintf("port %d", cfg.Port))                                    // message
	klog.Info(record(cfg.Name))                                                    // site
	serve(fmt.Sprintf("%s", cfg.Addr))                                             // site
	cfg.lg.Fatal("no region", zap.String("region", cfg.Region))                    // site
}

func fail(cfg *Config) {
	klog.Fatalf("cannot use %s", cfg.Dir) // site
}

// (c) Conditions whose only effect is whether a line is logged, and ones that do more.
func conditions(cfg *Config) {
	if !cfg.TLS.Empty() { // message
		cfg.lg.Warn("scheme is http; ignoring the certificates", zap.String("addr", cfg.Addr)) // message
	}
	if cfg.Debug { // message
		klog.Warning("debug is on")
	}
	if cfg.Debug { // site
		klog.Info("debug")
		enableDebug()
	}
	if cfg.Port > 0 { // site
		klog.Info("port")
	} else {
		klog.Info("no port")
	}
	if cfg.Region != "" && touch() { // site
		klog.Info("region")
	}
	if cfg.Port < 0 { // site
		klog.Fatal("negative port")
	}
	if n := touched + 1; cfg.Count > n { // message
		klog.Info("count")
	}
	if ok := touch(); ok && len(cfg.Peers) > 0 { // site
		klog.Info("peers")
	}
}

func Root(args []string) {
	cfg := &Config{lg: zap.NewNop()}
	fs := flag.NewFlagSet("msgtest", flag.ContinueOnError)
	fs.StringVar(&cfg.Addr, "addr", "", "address")
	fs.StringVar(&cfg.Peers, "peers", "", "peer URLs")
	fs.Uint64Var(&cfg.Count, "count", 0, "snapshot count")
	fs.StringVar(&cfg.Name, "name", "", "member name")
	fs.IntVar(&cfg.Port, "port", 0, "port")
	fs.BoolVar(&cfg.Debug, "debug", false, "debug")
	fs.StringVar(&cfg.Dir, "dir", "", "data directory")
	fs.StringVar(&cfg.Region, "region", "", "region")
	fs.StringVar(&cfg.TLS.CA, "ca", "", "CA file")
	fs.StringVar(&cfg.TLS.Key, "key", "", "key file")
	_ = fs.Parse(args)
	present(cfg)
	logArgs(cfg)
	fail(cfg)
	conditions(cfg)
}
