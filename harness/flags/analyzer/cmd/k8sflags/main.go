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
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	kcm "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
)

func dump(cmd *cobra.Command) []runtimeflags.Flag {
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
