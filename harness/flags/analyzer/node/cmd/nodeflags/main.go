// nodeflags prints, as JSON, the flag set the kubelet and kube-proxy really have, as k8sflags does
// for the control plane. The kubelet parses its own flag set (NewKubeletCommand sets
// DisableFlagParsing and fills a clean pflag.FlagSet), so that set is built here the same way
// (cmd/kubelet/app/server.go:144-145, 313-316); kube-proxy's is its cobra command's.
package main

import (
	"encoding/json"
	"os"
	"sort"

	"github.com/spf13/pflag"
	cliflag "k8s.io/component-base/cli/flag"
	proxy "k8s.io/kubernetes/cmd/kube-proxy/app"
	"k8s.io/kubernetes/cmd/kubelet/app/options"
)

type flagInfo struct {
	Name                string `json:"name"`
	Shorthand           string `json:"shorthand,omitempty"`
	Type                string `json:"type"`
	Default             string `json:"default"`
	Help                string `json:"help"`
	Deprecated          string `json:"deprecated,omitempty"`
	ShorthandDeprecated string `json:"shorthandDeprecated,omitempty"`
	Hidden              bool   `json:"hidden,omitempty"`
}

func dump(fs *pflag.FlagSet) []flagInfo {
	var out []flagInfo
	fs.VisitAll(func(f *pflag.Flag) {
		out = append(out, flagInfo{f.Name, f.Shorthand, f.Value.Type(), f.DefValue, f.Usage, f.Deprecated, f.ShorthandDeprecated, f.Hidden})
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
	doc := map[string][]flagInfo{
		"kubelet":    dump(kubeletFlags()),
		"kube-proxy": dump(proxy.NewProxyCommand().Flags()),
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(doc); err != nil {
		os.Exit(1)
	}
}
