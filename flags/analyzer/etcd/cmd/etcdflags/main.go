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
)

type flagInfo struct {
	Name    string `json:"name"`
	Default string `json:"default"`
	Help    string `json:"help"`
}

func main() {
	fs := flag.NewFlagSet("etcd", flag.ContinueOnError)
	embed.NewConfig().AddFlags(fs)
	var out []flagInfo
	fs.VisitAll(func(f *flag.Flag) { out = append(out, flagInfo{f.Name, f.DefValue, f.Usage}) })
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(map[string][]flagInfo{"etcd": out}); err != nil {
		os.Exit(1)
	}
}
