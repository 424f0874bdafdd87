// k8sflags prints, as JSON, the flag set each pinned Kubernetes command really has: it builds the
// cobra command exactly as the binary does and walks its pflag.FlagSet. The analyzer uses this as
// ground truth for which flags a component has and for their type, default, help, deprecated and
// hidden state; the source locations come from the static analysis.
package main

import (
	"encoding/json"
	"os"
	"sort"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"hardwire.local/flags/analyzer/runtimeflags"
	cliflag "k8s.io/component-base/cli/flag"
	// As each command's main package does (cmd/kube-apiserver/apiserver.go:26 and the others'):
	// the JSON log format registers --log-json-info-buffer-size and --log-json-split-stream.
	_ "k8s.io/component-base/logs/json/register"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	kcm "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
)

func dump(cmd *cobra.Command) []runtimeflags.Flag {
	// What cli.Run does before it parses (k8s.io/component-base/cli/run.go:89): names as the binary
	// prints and accepts them (kube-controller-manager's concurrent_rc_syncs is --concurrent-rc-syncs).
	cmd.SetGlobalNormalizationFunc(cliflag.WordSepNormalizeFunc)
	var out []runtimeflags.Flag
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		out = append(out, runtimeflags.Flag{Name: f.Name, Shorthand: f.Shorthand, Type: f.Value.Type(), Default: f.DefValue, Help: f.Usage, Deprecated: f.Deprecated, ShorthandDeprecated: f.ShorthandDeprecated, Hidden: f.Hidden})
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func main() {
	doc := runtimeflags.Doc{
		"kube-apiserver":          dump(apiserver.NewAPIServerCommand()),
		"kube-controller-manager": dump(kcm.NewControllerManagerCommand()),
		"kube-scheduler":          dump(scheduler.NewSchedulerCommand()),
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(doc); err != nil {
		os.Exit(1)
	}
}
