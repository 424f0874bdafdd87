// proxyflags prints, as JSON, the flag set kube-proxy really has: its cobra command, built with the
// imports of its own main package (cmd/kube-proxy/proxy.go:22-26) and nothing else, because the
// command adds Go's whole flag.CommandLine, which any other import could fill; then normalized as
// cli.Run does (k8s.io/component-base/cli/run.go:89).
package main

import (
	"encoding/json"
	"os"
	"sort"

	"github.com/spf13/pflag"
	"hardwire.local/flags/analyzer/runtimeflags"
	cliflag "k8s.io/component-base/cli/flag"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-proxy/app"
)

func main() {
	cmd := app.NewProxyCommand()
	cmd.SetGlobalNormalizationFunc(cliflag.WordSepNormalizeFunc)
	// What cobra merges in when the command runs (cobra command.go updateParentsPflags): pflag's
	// CommandLine, where verflag registers --version. Not cobra's own --help, which it adds then too
	// (InitDefaultHelpFlag): no Kubernetes code registers that one.
	cmd.PersistentFlags().AddFlagSet(pflag.CommandLine)
	cmd.Flags().AddFlagSet(cmd.PersistentFlags())
	var out []runtimeflags.Flag
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		out = append(out, runtimeflags.Flag{Name: f.Name, Shorthand: f.Shorthand, Type: f.Value.Type(), Default: f.DefValue, Help: f.Usage, Deprecated: f.Deprecated, ShorthandDeprecated: f.ShorthandDeprecated, Hidden: f.Hidden})
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(map[string][]runtimeflags.Flag{"kube-proxy": out}); err != nil {
		os.Exit(1)
	}
}
