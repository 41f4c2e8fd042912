package cli

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/printable"
)

func newRolloutCommand(kube *genericclioptions.ConfigFlags) *cobra.Command {
	var allNamespaces bool
	var output string
	cmd := &cobra.Command{
		Use:   "rollout",
		Short: "Show the waves of a rollout: which revision each site runs, and what it waits on",
		Long: `Show the OsmDeployments of the namespace (-n, or the kubeconfig's; -A for all) in the waves
their dependsOn entries with revision Same make: each site with the revision it runs, the one
it is to apply, where it stands (Applied, Applying, Waiting, Baking, Halted, Failed, Suspended)
and what it waits on: the dependency and its gate (applying, health check, its own wave, bake
time with the time left), or the site that failed the revision and why. Entries with revision
Any are listed too. It only reads OsmDeployments: nothing is written, nothing sent to OSM.`,
		Example: `  osmops rollout -n telco
  osmops rollout -A -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "table" && output != "json" {
				return fmt.Errorf("--output %q: table or json", output)
			}
			items, err := listDeployments(cmd.Context(), kube, allNamespaces)
			if err != nil {
				return err
			}
			sites := BuildRollout(items, time.Now())
			if output == "json" {
				encoder := json.NewEncoder(cmd.OutOrStdout())
				encoder.SetIndent("", "  ")
				return encoder.Encode(sites)
			}
			if len(sites) == 0 {
				fmt.Fprintln(cmd.ErrOrStderr(), "no OsmDeployment found")
				return nil
			}
			RenderRollout(cmd.OutOrStdout(), sites)
			return nil
		},
	}
	cmd.Flags().BoolVarP(&allNamespaces, "all-namespaces", "A", false, "show the OsmDeployments of every namespace")
	cmd.Flags().StringVarP(&output, "output", "o", "table", "table or json")
	return cmd
}

// States of a site in a rollout, as osmops rollout names them.
const (
	StateApplied   = "Applied"
	StateApplying  = "Applying"
	StateWaiting   = string(gitopsv1alpha1.RolloutWaiting)
	StateBaking    = string(gitopsv1alpha1.RolloutBaking)
	StateHalted    = string(gitopsv1alpha1.RolloutHalted)
	StateFailed    = "Failed"
	StateSuspended = "Suspended"
	StateNotReady  = "NotReady"
)

// RolloutSite is one OsmDeployment of a rollout, as osmops rollout shows it. Every string that
// comes from the cluster has its control characters escaped (printable), in the table and in
// the JSON alike.
type RolloutSite struct {
	// Site is namespace/name.
	Site string `json:"site"`
	// Wave is 1 for a site after no listed site (revision Same), else one more than the last
	// wave it waits for; 0 for a site in a cycle of dependencies.
	Wave int `json:"wave"`
	// Runs is status.lastAppliedRevision; Target the revision it is to apply: status.rollout's
	// when a wave holds it, else the last attempted one.
	Runs   string `json:"runs,omitempty"`
	Target string `json:"target,omitempty"`
	State  string `json:"state"`
	// WaitsOn is the dependency that holds it (status.rollout.dependency), Gate what that
	// dependency has yet to do (applying, health check, its wave, bake time), BakedAt when the
	// bake time ends, HaltedBy the site that failed the revision.
	WaitsOn  string     `json:"waitsOn,omitempty"`
	Gate     string     `json:"gate,omitempty"`
	BakedAt  *time.Time `json:"bakedAt,omitempty"`
	HaltedBy string     `json:"haltedBy,omitempty"`
	// Reason and Message are the Ready condition's; Ready and Healthy their conditions' status.
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	Ready   string `json:"ready"`
	Healthy string `json:"healthy"`
	// After are its dependsOn entries.
	After []RolloutEdge `json:"after,omitempty"`
}

// RolloutEdge is a dependsOn entry: the site, Same or Any, the bake time; Listed is false for a
// site not among those read (another namespace without -A, or none).
type RolloutEdge struct {
	Site     string `json:"site"`
	Revision string `json:"revision"`
	BakeTime string `json:"bakeTime,omitempty"`
	Listed   bool   `json:"listed"`
}

// BuildRollout orders the OsmDeployments in waves and says, for each, where it stands at now.
func BuildRollout(items []gitopsv1alpha1.OsmDeployment, now time.Time) []RolloutSite {
	byKey := make(map[string]*gitopsv1alpha1.OsmDeployment, len(items))
	for i := range items {
		byKey[items[i].Namespace+"/"+items[i].Name] = &items[i]
	}
	waves := wavesOf(items, byKey)
	sites := make([]RolloutSite, 0, len(items))
	for i := range items {
		d := &items[i]
		key := d.Namespace + "/" + d.Name
		site := RolloutSite{Site: key, Wave: waves[key], Runs: d.Status.LastAppliedRevision,
			Target: d.Status.LastAttemptedRevision, Ready: conditionStatus(d, meta.ReadyCondition),
			Healthy: conditionStatus(d, gitopsv1alpha1.HealthyCondition),
			Reason:  conditions.GetReason(d, meta.ReadyCondition), Message: oneLine(conditions.GetMessage(d, meta.ReadyCondition))}
		for _, dep := range d.Spec.DependsOn {
			edge := RolloutEdge{Site: dependencyKey(d, dep.Namespace, dep.Name), Revision: string(cmp.Or(dep.Revision, gitopsv1alpha1.DependencyRevisionAny))}
			if dep.BakeTime != nil {
				edge.BakeTime = dep.BakeTime.Duration.String()
			}
			_, edge.Listed = byKey[edge.Site]
			site.After = append(site.After, edge)
		}
		site.State = stateOf(d)
		if rollout := d.Status.Rollout; rollout != nil {
			site.Target = rollout.Revision
			site.WaitsOn = dependencyKey(d, "", rollout.Dependency)
			site.Gate, site.HaltedBy = gateOf(rollout, site.WaitsOn, byKey[site.WaitsOn], byKey, now)
			if rollout.BakedAt != nil {
				bakedAt := rollout.BakedAt.UTC()
				site.BakedAt = &bakedAt
			}
		}
		sites = append(sites, escapeSite(site))
	}
	slices.SortFunc(sites, func(a, b RolloutSite) int {
		return cmp.Or(cmp.Compare(waveOrder(a.Wave), waveOrder(b.Wave)), cmp.Compare(a.Site, b.Site))
	})
	return sites
}

// waveOrder puts the sites of a cycle (wave 0) last.
func waveOrder(wave int) int {
	if wave == 0 {
		return int(^uint(0) >> 1)
	}
	return wave
}

// wavesOf numbers the waves that the entries with revision Same make among the listed sites
// (Kahn's order: a site comes once every listed site it waits for came); the sites left, in a
// cycle, have none.
func wavesOf(items []gitopsv1alpha1.OsmDeployment, byKey map[string]*gitopsv1alpha1.OsmDeployment) map[string]int {
	waits := make(map[string][]string, len(items))
	for _, d := range items {
		key := d.Namespace + "/" + d.Name
		for _, dep := range d.Spec.DependsOn {
			if other := dependencyKey(&d, dep.Namespace, dep.Name); dep.Revision == gitopsv1alpha1.DependencyRevisionSame && byKey[other] != nil && other != key {
				waits[key] = append(waits[key], other)
			}
		}
	}
	waves := make(map[string]int, len(items))
	for wave := 1; len(waves) < len(byKey); wave++ {
		var next []string
		for key := range byKey {
			if waves[key] != 0 {
				continue
			}
			if !slices.ContainsFunc(waits[key], func(other string) bool { return waves[other] == 0 || waves[other] == wave }) {
				next = append(next, key)
			}
		}
		if len(next) == 0 {
			break // the rest wait for one another
		}
		for _, key := range next {
			waves[key] = wave
		}
	}
	return waves
}

// dependencyKey is namespace/name of a dependency of d: in d's namespace when namespace is
// empty; status.rollout's dependency reads "name" or "namespace/name".
func dependencyKey(d *gitopsv1alpha1.OsmDeployment, namespace, name string) string {
	if namespace == "" && !strings.Contains(name, "/") {
		namespace = d.Namespace
	}
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// stateOf says where a site stands: held by a wave (its phase), or by its own conditions.
func stateOf(d *gitopsv1alpha1.OsmDeployment) string {
	switch {
	case d.Spec.Suspend:
		return StateSuspended
	case d.Status.Rollout != nil:
		return string(d.Status.Rollout.Phase)
	case conditions.IsStalled(d):
		return StateFailed
	case conditions.IsReconciling(d):
		return StateApplying
	case conditions.IsReady(d):
		return StateApplied
	}
	return StateNotReady
}

// gateOf says what the dependency dep (waitsOn) has yet to do for the held revision, and, when
// halted, which site failed it: the first along the halted ones that is not halted itself.
func gateOf(rollout *gitopsv1alpha1.RolloutStatus, waitsOn string, dep *gitopsv1alpha1.OsmDeployment, byKey map[string]*gitopsv1alpha1.OsmDeployment, now time.Time) (gate, haltedBy string) {
	short := gitopsv1alpha1.ShortRevision(rollout.Revision)
	switch {
	case rollout.Phase == gitopsv1alpha1.RolloutHalted:
		haltedBy, failed := waitsOn, dep
		for range byKey { // once per site at most: a cycle of halted sites ends
			if failed == nil || failed.Status.Rollout == nil || failed.Status.Rollout.Phase != gitopsv1alpha1.RolloutHalted {
				break
			}
			haltedBy = dependencyKey(failed, "", failed.Status.Rollout.Dependency)
			failed = byKey[haltedBy]
		}
		why := "not listed"
		if failed != nil {
			why = conditions.GetReason(failed, meta.ReadyCondition)
		}
		return fmt.Sprintf("halted: %s failed %s (%s)", haltedBy, short, why), haltedBy
	case rollout.Phase == gitopsv1alpha1.RolloutBaking && rollout.BakedAt != nil:
		if left := rollout.BakedAt.Sub(now); left > 0 {
			return fmt.Sprintf("bake time, %s left", left.Round(time.Second)), ""
		}
		return "bake time ended", ""
	case dep == nil:
		return "not listed (another namespace without -A, or none)", ""
	case dep.Status.Rollout != nil && gitopsv1alpha1.SameRevision(dep.Status.Rollout.Revision, rollout.Revision):
		return fmt.Sprintf("its wave (%s)", dep.Status.Rollout.Phase), ""
	case gitopsv1alpha1.SameRevision(dep.Status.LastAppliedRevision, rollout.Revision) && conditionStatus(dep, gitopsv1alpha1.HealthyCondition) == "Unknown":
		return "health check", ""
	case gitopsv1alpha1.SameRevision(dep.Status.LastAppliedRevision, rollout.Revision):
		return fmt.Sprintf("not Ready on %s (%s)", short, conditions.GetReason(dep, meta.ReadyCondition)), ""
	case gitopsv1alpha1.SameRevision(dep.Status.LastAttemptedRevision, rollout.Revision):
		return "applying " + short, ""
	}
	return short + " not attempted yet", ""
}

// conditionStatus is a condition's status, Unknown when it is not there.
func conditionStatus(d *gitopsv1alpha1.OsmDeployment, conditionType string) string {
	if c := conditions.Get(d, conditionType); c != nil {
		return string(c.Status)
	}
	return "Unknown"
}

// escapeSite escapes the control characters of every string the cluster put in a site.
func escapeSite(s RolloutSite) RolloutSite {
	for _, field := range []*string{&s.Site, &s.Runs, &s.Target, &s.State, &s.WaitsOn, &s.Gate, &s.HaltedBy, &s.Reason, &s.Message, &s.Ready, &s.Healthy} {
		*field = printable.String(*field)
	}
	s.After = slices.Clone(s.After)
	for i := range s.After {
		s.After[i].Site = printable.String(s.After[i].Site)
	}
	return s
}

// RenderRollout prints the sites, wave after wave, as a table: the revisions short, what each
// waits on, its conditions and its dependsOn entries.
func RenderRollout(w io.Writer, sites []RolloutSite) {
	table := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(cells ...string) {
		fmt.Fprintln(table, strings.Join(printable.Strings(cells), "\t"))
	}
	row("WAVE", "SITE", "RUNS", "TARGET", "STATE", "WAITS ON", "READY", "HEALTHY", "AFTER")
	for _, s := range sites {
		wave := fmt.Sprint(s.Wave)
		if s.Wave == 0 {
			wave = "cycle"
		}
		waitsOn := "-"
		switch {
		case s.WaitsOn != "":
			waitsOn = s.WaitsOn + ": " + s.Gate
			if s.HaltedBy != "" {
				waitsOn = s.Gate
			}
		case s.State == StateFailed || s.State == StateNotReady:
			waitsOn = cmp.Or(s.Reason, "-")
		}
		after := make([]string, 0, len(s.After))
		for _, e := range s.After {
			edge := e.Site + " (" + e.Revision
			if e.BakeTime != "" {
				edge += ", bake " + e.BakeTime
			}
			if !e.Listed {
				edge += ", not listed"
			}
			after = append(after, edge+")")
		}
		row(wave, s.Site, cmp.Or(gitopsv1alpha1.ShortRevision(s.Runs), "-"), cmp.Or(gitopsv1alpha1.ShortRevision(s.Target), "-"),
			s.State, waitsOn, s.Ready, s.Healthy, cmp.Or(strings.Join(after, ", "), "-"))
	}
	_ = table.Flush()
}
