// etcdflags prints, as JSON, the flags embed.Config.AddFlags registers on a fresh flag.FlagSet,
// with the standard library's own default (DefValue) and usage strings. etcdmain.newConfig calls
// the same AddFlags on embed.NewConfig(); the handful of flags newConfig adds itself are taken
// from the static analysis.
package main

import (
	"encoding/json"
	"flag"
	"os"

	"go.etcd.io/etcd/server/v3/embed"
	"hardwire.local/flags/analyzer/runtimeflags"
)

func main() {
	fs := flag.NewFlagSet("etcd", flag.ContinueOnError)
	embed.NewConfig().AddFlags(fs)
	var out []runtimeflags.Flag
	fs.VisitAll(func(f *flag.Flag) {
		out = append(out, runtimeflags.Flag{Name: f.Name, Default: f.DefValue, Help: f.Usage})
	})
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(runtimeflags.Doc{"etcd": out}); err != nil {
		os.Exit(1)
	}
}
