package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/engine"
	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/pipeline"
)

// The owner marker of the plan of a new OsmDeployment: no NS instance carries it, so none is
// owned, as none is by an OsmDeployment before its first reconcile.
const previewOwnerIdentity, previewNamespace, previewName = "osmops-diff", "preview", "new"

// diffFlags are the diff command's own flags.
type diffFlags struct {
	revision      revisionFlags
	osm           osmFlags
	deployment    string
	ownerIdentity string
	// claimsNamespace is the operator's namespace, where the claims of NS instance names live.
	claimsNamespace string
	prune           bool
	adoptExisting   bool
	force           bool
	// followPackages is spec.instancesFollowPackages.
	followPackages bool
}

func newDiffCommand(kube *genericclioptions.ConfigFlags) *cobra.Command {
	var f diffFlags
	cmd := &cobra.Command{
		Use:   "diff [DIR] (--osm URL | --deployment NAMESPACE/NAME)",
		Short: "Show the plan a revision would make in OSM, sending no change",
		Long: `Plan a revision against OSM with the operator's own engine, and print what
applying it would send: package uploads, NS instance creates, KDU upgrades with the values that
change (those from a Secret are never shown), package moves, deletes (prune) and orphans, and the
problems that would stop it. Only read requests are sent to OSM.

With --osm, the plan is that of a new OsmDeployment, which owns nothing yet, of the checkout
DIR (default "."); the repository's valuesFrom are read from the Kubernetes namespace of -n (or
the kubeconfig's). With --deployment, everything comes from that OsmDeployment, as its next
reconcile would see it: its settings, postBuild and valuesFrom, its OsmCluster's OSM and
credentials, its inventory and the owner marker the operator writes; the revision is the
checkout DIR when given, else the artifact its source holds now (what the cluster would apply),
downloaded and verified as the operator does, through the API server's service proxy when its
URL is source-controller's in-cluster address.

Exit status: 0 no change, 1 changes, 2 error (the revision's problems included).`,
		Example: `  osmops diff --deployment telco/osm-gitops
  osmops diff ./gitops --deployment telco/osm-gitops
  OSM_USERNAME=admin OSM_PASSWORD=... osmops diff ./gitops --osm https://osm.example.com:9999 --prune`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			report, err := f.run(cmd, kube, args)
			if err != nil {
				return err
			}
			RenderDiff(cmd.OutOrStdout(), report)
			return report.exitError()
		},
	}
	f.revision.add(cmd.Flags())
	f.osm.add(cmd.Flags())
	cmd.Flags().StringVar(&f.deployment, "deployment", "", "plan as the OsmDeployment NAMESPACE/NAME of the cluster would")
	cmd.Flags().StringVar(&f.ownerIdentity, "owner-identity", "", "the operator's --owner-identity, with --deployment (default: k8s-<UID of kube-system>, the operator's default)")
	cmd.Flags().StringVar(&f.claimsNamespace, "manager-namespace", "osmops-system", "the operator's namespace, where it claims NS instance names, with --deployment")
	cmd.Flags().BoolVar(&f.prune, "prune", false, "with --osm: plan as spec.prune")
	cmd.Flags().BoolVar(&f.adoptExisting, "adopt-existing", false, "with --osm: plan as spec.adoptExisting")
	cmd.Flags().BoolVar(&f.force, "force", false, "with --osm: plan as spec.force")
	cmd.Flags().BoolVar(&f.followPackages, "instances-follow-packages", false, "with --osm: plan as spec.instancesFollowPackages")
	cmd.MarkFlagsMutuallyExclusive("osm", "deployment")
	cmd.MarkFlagsOneRequired("osm", "deployment")
	for _, specFlag := range []string{"path", "file-extensions", "packages-path", "substitute", "substitute-from", "substitute-strict", "prune", "adopt-existing", "force",
		"instances-follow-packages"} {
		cmd.MarkFlagsMutuallyExclusive("deployment", specFlag)
	}
	return cmd
}

// run plans, as a new OsmDeployment against --osm or as the one of --deployment, the checkout
// of args (the source's current artifact with --deployment and no args).
func (f *diffFlags) run(cmd *cobra.Command, kube *genericclioptions.ConfigFlags, args []string) (DiffReport, error) {
	ctx := cmd.Context()
	if f.deployment != "" {
		return f.planDeployment(ctx, kube, args)
	}
	dir := checkoutDir(args)
	report := DiffReport{Dir: dir, OSM: f.osm.url, Project: f.osm.projectName()}
	opts, err := f.revision.options()
	if err != nil {
		return report, err
	}
	nbi, err := f.osm.client()
	if err != nil {
		return report, err
	}
	rev, err := gitops.Load(dir, opts)
	if report, done, err := withProblems(report, rev, err); done {
		return report, err
	}
	var get gitops.ValuesGetter
	if rev.ReadsValues(func(gitops.ValuesReference) bool { return true }) {
		c, namespace, err := kubeClient(kube)
		if err != nil {
			return report, fmt.Errorf("the repository's valuesFrom are read from the cluster: %w", err)
		}
		get = pipeline.ValuesGetter(c, namespace)
		rev, err = gitops.ResolveValues(ctx, rev, get)
		if report, done, err := withProblems(report, rev, err); done {
			return report, err
		}
	}
	// Without a cluster, no owner can be looked up (each counts as existing, as an owner of
	// another installation does for the operator), and no other OsmDeployment claims a name.
	planned, err := pipeline.Pipeline{NBI: nbi, OwnerIdentity: previewOwnerIdentity}.Plan(ctx, f.newDeployment(), rev, "", false)
	if err != nil {
		return report, err
	}
	return report.withPlan(ctx, rev, planned.Observed, planned.Plan, get, nil)
}

// newDeployment is the new OsmDeployment the flags describe. spec.driftDetection does not
// change its first plan: it has applied nothing yet, so whatever differs in OSM is a change
// in Git.
func (f *diffFlags) newDeployment() *gitopsv1alpha1.OsmDeployment {
	obj := &gitopsv1alpha1.OsmDeployment{}
	obj.Namespace, obj.Name = previewNamespace, previewName
	obj.Spec.Prune, obj.Spec.AdoptExisting, obj.Spec.Force = f.prune, f.adoptExisting, f.force
	obj.Spec.InstancesFollowPackages = f.followPackages
	return obj
}

// planDeployment plans as the OsmDeployment of --deployment (pipeline.PreviewPlan) the
// checkout of args, else its source's current artifact.
func (f *diffFlags) planDeployment(ctx context.Context, kube *genericclioptions.ConfigFlags, args []string) (DiffReport, error) {
	report := DiffReport{Deployment: f.deployment}
	namespace, name, found := strings.Cut(f.deployment, "/")
	if !found || namespace == "" || name == "" {
		return report, fmt.Errorf("--deployment %q: want NAMESPACE/NAME", f.deployment)
	}
	c, _, err := kubeClient(kube)
	if err != nil {
		return report, err
	}
	obj := &gitopsv1alpha1.OsmDeployment{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, obj); err != nil {
		return report, fmt.Errorf("OsmDeployment %s: %w", f.deployment, err)
	}
	// The header names the OSM even when the revision has problems and no plan is made.
	cluster := &gitopsv1alpha1.OsmCluster{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: obj.Spec.ClusterRef.Name}, cluster); err != nil {
		return report, fmt.Errorf("OsmCluster %s/%s: %w", namespace, obj.Spec.ClusterRef.Name, err)
	}
	report.OSM, report.Project = cluster.Spec.URL, cluster.GetProject()
	identity, err := pipeline.ResolveOwnerIdentity(ctx, c, f.ownerIdentity)
	if err != nil {
		return report, err
	}
	report.Dir = checkoutDir(args)
	if len(args) == 0 {
		checkout, err := fetchSourceArtifact(ctx, kube, c, obj)
		if err != nil {
			return report, err
		}
		defer func() { _ = os.RemoveAll(checkout.Dir) }()
		report.Dir, report.Source = checkout.Dir, checkout.Name
	}
	preview, err := pipeline.PreviewPlan(ctx, c, obj, report.Dir, identity, f.claimsNamespace)
	var rev *gitops.Revision
	if preview != nil {
		rev = preview.Revision
	}
	if report, done, err := withProblems(report, rev, err); done {
		return report, err
	}
	var applied gitDeclared
	if len(args) > 0 {
		applied = appliedGitValues(ctx, report.Dir, obj.Status.LastAppliedRevision, preview.Revision.NsInstances)
	}
	return report.withPlan(ctx, preview.Revision, preview.Observed, preview.Plan, pipeline.ValuesGetter(c, obj.Namespace), applied)
}

// withProblems puts the problems of a revision that does not load or resolve into the report;
// done says that there is no plan to make, err that there is no report to print either.
func withProblems(report DiffReport, rev *gitops.Revision, err error) (DiffReport, bool, error) {
	var invalid *gitops.ValidationError
	var unresolved *gitops.ValuesProblems
	switch {
	case errors.As(err, &invalid):
		report.Problems = invalid.Problems
	case errors.As(err, &unresolved):
		report.Problems = unresolved.Problems
	case err != nil:
		return report, true, err
	default:
		return report, false, nil
	}
	if rev != nil {
		report.Warnings = rev.Warnings
	}
	return report, true, nil
}

// DiffReport is a plan as the diff command shows it.
type DiffReport struct {
	Dir string
	// Source names the source's artifact planned, when it is not a checkout given ("" then).
	Source string
	// OSM is the NBI planned against, and Project the OSM project.
	OSM, Project string
	// Deployment is the OsmDeployment planned as ("namespace/name"); "" for a new one.
	Deployment string
	Packages   []PackageChange
	Creates    []InstanceChange
	Upgrades   []InstanceChange
	Moves      []InstanceChange
	Deletes    []InstanceChange
	// Orphans are owned NS instances Git no longer declares, left running (prune is off).
	Orphans []string
	// Drifts are what changed in OSM outside Git and driftDetection.mode warn leaves as it is.
	Drifts []engine.Drift
	// Warnings are the revision's (repository settings) and the plan's (what OSM may refuse).
	Warnings []string
	// Problems stop the revision: nothing would be applied.
	Problems []gitops.Problem
}

// PackageChange is one package upload: Verb is create, update or mark.
type PackageChange struct {
	Verb, Kind, ID, Source, Reason string
}

// InstanceChange is one change of an NS instance.
type InstanceChange struct {
	Name   string
	Reason string
	// Target, for a create, says what the instance is made of.
	Target string
	// KDUs are the KDUs whose values or chart differ (creates: every KDU with values).
	KDUs []KDUChange
}

// KDUChange is what differs of one KDU.
type KDUChange struct {
	Member, Name string
	// OldChart and NewChart are set when the chart changes.
	OldChart, NewChart string
	Values             []ValueChange
}

// changes counts what the plan sends to OSM.
func (r DiffReport) changes() int {
	return len(r.Packages) + len(r.Creates) + len(r.Upgrades) + len(r.Moves) + len(r.Deletes)
}

// exitError is the diff's exit status: ExitError with problems, ExitFindings with changes.
func (r DiffReport) exitError() error {
	switch {
	case len(r.Problems) > 0:
		return &exitError{code: ExitError}
	case r.changes() > 0:
		return findings
	}
	return nil
}

// withPlan fills the report with the plan, showing each KDU's values as they would change,
// with what comes from a Secret (read with get) masked, and the running values that the
// applied commit declared in Git (applied; nil when unknown) shown.
func (r DiffReport) withPlan(ctx context.Context, rev *gitops.Revision, o *engine.Observed, plan engine.Plan, get gitops.ValuesGetter,
	applied gitDeclared) (DiffReport, error) {
	r.Warnings = rev.Warnings
	for _, warning := range plan.Warnings {
		r.Warnings = append(r.Warnings, warning.String())
	}
	if err, _ := plan.Invalid(); err != nil {
		r.Problems = err.Problems
		return r, nil
	}
	for _, action := range plan.Packages {
		verb := "create"
		switch {
		case action.MarkOnly:
			verb = "mark"
		case action.ID != "":
			verb = "update"
		}
		r.Packages = append(r.Packages, PackageChange{Verb: verb, Kind: string(action.Package.Descriptor.Kind),
			ID: action.Package.Descriptor.ID, Source: action.Package.Source, Reason: action.Reason})
	}
	for _, action := range plan.Creates {
		ns := action.Instance
		change := InstanceChange{Name: action.Name, Reason: action.Reason,
			Target: fmt.Sprintf("NSD %s on VIM account %s", ns.NsdName, ns.VimAccountName)}
		kdus, err := kduChanges(ctx, o, ns, "", get, nil)
		if err != nil {
			return r, err
		}
		change.KDUs = kdus
		r.Creates = append(r.Creates, change)
	}
	for _, action := range plan.Upgrades {
		kdus, err := kduChanges(ctx, o, action.Instance, action.ID, get, applied[action.Name])
		if err != nil {
			return r, err
		}
		r.Upgrades = append(r.Upgrades, InstanceChange{Name: action.Name, Reason: action.Reason, KDUs: kdus})
	}
	for _, action := range plan.PackageMoves {
		r.Moves = append(r.Moves, InstanceChange{Name: action.Name, Reason: action.Reason})
	}
	for _, action := range plan.Deletes {
		r.Deletes = append(r.Deletes, InstanceChange{Name: action.Name, Reason: action.Reason})
	}
	r.Orphans, r.Drifts = plan.Orphans, plan.Drifts
	return r, nil
}

// kduChanges lists the KDUs of ns whose values or chart differ from what the instance id runs
// ("" for one to create: every KDU with values is new). A KDU whose running values were not
// observed is compared with none. applied are the values of each "member/kdu" the applied
// commit declared in Git (diffValues).
func kduChanges(ctx context.Context, o *engine.Observed, ns gitops.NsInstance, id string, get gitops.ValuesGetter,
	applied map[string]string) ([]KDUChange, error) {
	var changes []KDUChange
	for _, vnf := range ns.Members() {
		for _, kdu := range vnf.KDUs {
			var masked [][]string
			if get != nil {
				var err error
				if masked, err = gitops.SecretValuePaths(ctx, kdu, get); err != nil {
					return nil, err
				}
			}
			running := o.KDUValues[id][vnf.MemberVnfIndex][kdu.Name]
			change := KDUChange{Member: vnf.MemberVnfIndex, Name: kdu.Name,
				Values: diffValues(running, ns.ParamsJSON(vnf.MemberVnfIndex, kdu), masked, applied[vnf.MemberVnfIndex+"/"+kdu.Name])}
			if chart := o.KDUModels[id][vnf.MemberVnfIndex][kdu.Name]; id != "" && kdu.Model != "" && chart != kdu.Model {
				change.OldChart, change.NewChart = chart, kdu.Model
			}
			if len(change.Values) > 0 || change.NewChart != "" {
				changes = append(changes, change)
			}
		}
	}
	return changes, nil
}

// RenderDiff prints the plan: what it is made for, then each kind of change, then the
// warnings and problems, then a summary.
func RenderDiff(w io.Writer, r DiffReport) {
	owner := "as a new OsmDeployment, which owns nothing yet (--osm: no owner)"
	if r.Deployment != "" {
		owner = "as OsmDeployment " + r.Deployment
	}
	revision := r.Dir
	if r.Source != "" {
		revision = r.Source
	}
	printf(w, "Plan of %s against OSM %s (project %s), %s\n", revision, r.OSM, r.Project, owner)
	if len(r.Packages) > 0 {
		fmt.Fprintln(w, "\nPackages:")
		for _, p := range r.Packages {
			printf(w, "  %s %s %s package %s (%s): %s\n", verbSign(p.Verb), p.Verb, p.Kind, p.ID, p.Source, p.Reason)
		}
	}
	sections := []struct {
		title, sign, verb string
		changes           []InstanceChange
	}{
		{"NS instances to create", "+", "create", r.Creates},
		{"KDUs to upgrade", "~", "upgrade", r.Upgrades},
		{"VNFs to move to their package's new revision", "~", "move", r.Moves},
		{"NS instances to delete (prune)", "-", "delete", r.Deletes},
	}
	for _, section := range sections {
		if len(section.changes) == 0 {
			continue
		}
		printf(w, "\n%s:\n", section.title)
		for _, change := range section.changes {
			renderInstanceChange(w, section.sign, section.verb, change)
		}
	}
	drifts := make([]string, len(r.Drifts))
	for i, d := range r.Drifts {
		drifts[i] = d.Name + ": " + d.What
	}
	renderNotes(w, "Orphans (no longer declared, left running as prune is off)", r.Orphans)
	renderNotes(w, "Changed in OSM outside Git, left as it is (driftDetection.mode warn)", drifts)
	renderNotes(w, "Warnings", r.Warnings)
	if len(r.Problems) > 0 {
		fmt.Fprintln(w, "\nProblems (nothing would be applied):")
		for _, problem := range r.Problems {
			printf(w, "  ✗ %s\n", problem)
		}
		printf(w, "\n✗ %s: the revision would be rejected\n", plural(len(r.Problems), "problem", "problems"))
		return
	}
	switch {
	case r.changes() == 0 && len(r.Drifts) > 0:
		fmt.Fprintln(w, "\n✔ no change to send: OSM differs from the revision only where drift is left as it is")
		return
	case r.changes() == 0:
		fmt.Fprintln(w, "\n✔ no change: OSM matches the revision")
		return
	}
	printf(w, "\n%s, %s, %s, %s, %s, %s\n",
		plural(len(r.Packages), "package upload", "package uploads"), plural(len(r.Creates), "create", "creates"),
		plural(len(r.Upgrades), "upgrade", "upgrades"), plural(len(r.Moves), "package move", "package moves"),
		plural(len(r.Deletes), "delete", "deletes"), plural(len(r.Orphans), "orphan", "orphans"))
}

// renderNotes prints a titled list of what the plan leaves or warns of, when it is not empty.
func renderNotes(w io.Writer, title string, notes []string) {
	if len(notes) == 0 {
		return
	}
	printf(w, "\n%s:\n", title)
	for _, note := range notes {
		printf(w, "  ! %s\n", note)
	}
}

// verbSign marks a package action: + new, ~ changed, * marked.
func verbSign(verb string) string {
	switch verb {
	case "create":
		return "+"
	case "update":
		return "~"
	}
	return "*"
}

// renderInstanceChange prints one NS instance change and its KDUs' changes.
func renderInstanceChange(w io.Writer, sign, verb string, c InstanceChange) {
	target := ""
	if c.Target != "" {
		target = " (" + c.Target + ")"
	}
	printf(w, "  %s %s %s%s: %s\n", sign, verb, c.Name, target, c.Reason)
	for _, kdu := range c.KDUs {
		printf(w, "      KDU %s of VNF %s:\n", kdu.Name, kdu.Member)
		if kdu.NewChart != "" {
			printf(w, "        ~ chart: %s → %s\n", orNone(kdu.OldChart), kdu.NewChart)
		}
		for _, v := range kdu.Values {
			printf(w, "        %s\n", renderValueChange(v))
		}
	}
}

// renderValueChange is one line of a values diff: "+ path: new", "- path: old", "~ path: old
// → new"; a masked value shows as "(from a Secret: not shown)".
func renderValueChange(v ValueChange) string {
	old, next := v.Old, v.New
	if v.Masked {
		const hidden = "(from a Secret: not shown)"
		switch {
		case old == "":
			return fmt.Sprintf("+ %s: %s", v.Path, hidden)
		case next == "":
			return fmt.Sprintf("- %s: %s", v.Path, hidden)
		}
		return fmt.Sprintf("~ %s: %s", v.Path, hidden)
	}
	switch {
	case old == "":
		return fmt.Sprintf("+ %s: %s", v.Path, next)
	case next == "":
		return fmt.Sprintf("- %s: %s", v.Path, old)
	}
	return fmt.Sprintf("~ %s: %s → %s", v.Path, old, next)
}

// orNone is s, or "(none)" when empty.
func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
