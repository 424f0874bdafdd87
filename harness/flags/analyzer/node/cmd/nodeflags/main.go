// nodeflags prints, as JSON, the flag set the kubelet really has, as k8sflags does for the control
// plane. The kubelet parses its own flag set (NewKubeletCommand sets DisableFlagParsing and fills a
// clean pflag.FlagSet), so that set is built here the same way (cmd/kubelet/app/server.go:144-145,
// 313-316). kube-proxy's is dumped by proxyflags, a binary of its own: the kubelet's imports put
// cadvisor's flags on Go's flag.CommandLine, which kube-proxy's command adopts whole.
package main

import (
	"encoding/json"
	"os"
	"sort"

	"github.com/spf13/pflag"
	"hardwire.local/flags/analyzer/runtimeflags"
	cliflag "k8s.io/component-base/cli/flag"
	_ "k8s.io/component-base/logs/json/register" // as cmd/kubelet/kubelet.go:29 does: the --log-json-* flags
	"k8s.io/kubernetes/cmd/kubelet/app/options"
)

func dump(fs *pflag.FlagSet) []runtimeflags.Flag {
	var out []runtimeflags.Flag
	fs.VisitAll(func(f *pflag.Flag) {
		out = append(out, runtimeflags.Flag{Name: f.Name, Shorthand: f.Shorthand, Type: f.Value.Type(), Default: f.DefValue, Help: f.Usage, Deprecated: f.Deprecated, ShorthandDeprecated: f.ShorthandDeprecated, Hidden: f.Hidden})
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func kubeletFlags() *pflag.FlagSet {
	fs := pflag.NewFlagSet("kubelet", pflag.ContinueOnError)
	fs.SetNormalizeFunc(cliflag.WordSepNormalizeFunc)
	cfg, err := options.NewKubeletConfiguration()
	if err != nil {
		os.Exit(1)
	}
	options.NewKubeletFlags().AddFlags(fs)
	options.AddKubeletConfigFlags(fs, cfg)
	options.AddGlobalFlags(fs)
	fs.BoolP("help", "h", false, "help for kubelet")
	return fs
}

func main() {
	doc := map[string][]runtimeflags.Flag{
		"kubelet": dump(kubeletFlags()),
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(doc); err != nil {
		os.Exit(1)
	}
}
