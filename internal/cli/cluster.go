package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/fluxcd/pkg/runtime/object"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/pipeline"
	"github.com/osmops/osmops/internal/printable"
)

// pollInterval is how often a wait reads the object again.
const pollInterval = 500 * time.Millisecond

// waitExitStatus says what the exit status of a command that waits for a reconcile tells.
const waitExitStatus = "Exit status: 0 Ready, 1 failed or stalled, 2 error (a timeout included)."

// defaultTimeout bounds the waits of reconcile and resume.
const defaultTimeout = 5 * time.Minute

func newGetCommand(kube *genericclioptions.ConfigFlags) *cobra.Command {
	var allNamespaces bool
	cmd := &cobra.Command{
		Use:   "get [NAME]",
		Short: "List the OsmDeployments of a namespace with their NS instances",
		Long: `List the OsmDeployments of the namespace (-n, or the kubeconfig's; -A for all), each with its
revision, suspension and Ready condition, and below it the NS instances of its inventory with
their state and reason.`,
		Example: `  osmops get -n telco
  osmops get -A`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var items []gitopsv1alpha1.OsmDeployment
			if len(args) == 1 {
				_, obj, err := deploymentOf(cmd.Context(), kube, args[0])
				if err != nil {
					return err
				}
				items = append(items, *obj)
			} else {
				listed, err := listDeployments(cmd.Context(), kube, allNamespaces)
				if err != nil {
					return err
				}
				items = listed
			}
			if len(items) == 0 {
				fmt.Fprintln(cmd.ErrOrStderr(), "no OsmDeployment found")
				return nil
			}
			RenderGet(cmd.OutOrStdout(), items, allNamespaces)
			return nil
		},
	}
	cmd.Flags().BoolVarP(&allNamespaces, "all-namespaces", "A", false, "list the OsmDeployments of every namespace")
	return cmd
}

// onDeployment runs act, within timeout (read when the command runs), on the OsmDeployment
// the command's argument names.
func onDeployment(kube *genericclioptions.ConfigFlags, timeout *time.Duration,
	act func(ctx context.Context, c client.Client, obj *gitopsv1alpha1.OsmDeployment, out io.Writer) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		ctx, cancel := context.WithTimeout(cmd.Context(), *timeout)
		defer cancel()
		c, obj, err := deploymentOf(ctx, kube, args[0])
		if err != nil {
			return err
		}
		return act(ctx, c, obj, cmd.OutOrStdout())
	}
}

// deploymentOf reads the OsmDeployment name of the namespace of the flags.
func deploymentOf(ctx context.Context, kube *genericclioptions.ConfigFlags, name string) (client.Client, *gitopsv1alpha1.OsmDeployment, error) {
	c, namespace, err := kubeClient(kube)
	if err != nil {
		return nil, nil, err
	}
	obj := &gitopsv1alpha1.OsmDeployment{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, obj); err != nil {
		return nil, nil, fmt.Errorf("OsmDeployment %s/%s: %w", namespace, name, err)
	}
	return c, obj, nil
}

// listDeployments lists the OsmDeployments of the kubeconfig's namespace (-n), or of all.
func listDeployments(ctx context.Context, kube *genericclioptions.ConfigFlags, allNamespaces bool) ([]gitopsv1alpha1.OsmDeployment, error) {
	c, namespace, err := kubeClient(kube)
	if err != nil {
		return nil, err
	}
	var list gitopsv1alpha1.OsmDeploymentList
	var opts []client.ListOption
	if !allNamespaces {
		opts = append(opts, client.InNamespace(namespace))
	}
	if err := c.List(ctx, &list, opts...); err != nil {
		return nil, err
	}
	return list.Items, nil
}

// RenderGet prints a table of the OsmDeployments, in namespace and name order, each followed by
// the NS instances of its inventory; with allNamespaces, the namespace comes first.
func RenderGet(w io.Writer, items []gitopsv1alpha1.OsmDeployment, allNamespaces bool) {
	items = slices.Clone(items)
	slices.SortFunc(items, func(a, b gitopsv1alpha1.OsmDeployment) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	table := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(namespace string, cells ...string) {
		if allNamespaces {
			cells = append([]string{namespace}, cells...)
		}
		fmt.Fprintln(table, strings.Join(printable.Strings(cells), "\t"))
	}
	row("NAMESPACE", "NAME", "REVISION", "SUSPENDED", "READY", "MESSAGE")
	for _, d := range items {
		ready := conditions.Get(&d, meta.ReadyCondition)
		status, message := "Unknown", ""
		if ready != nil {
			status, message = string(ready.Status), ready.Message
		}
		row(d.Namespace, d.Name, cmp.Or(d.Status.LastAppliedRevisionShort, "-"), fmt.Sprint(d.Spec.Suspend), status, oneLine(message))
		if d.Status.Inventory == nil {
			continue
		}
		for _, e := range d.Status.Inventory.NsInstances {
			row("", "  ns/"+e.Name, "", "", string(e.State), oneLine(e.Reason))
		}
	}
	_ = table.Flush()
}

// oneLine keeps a message on its table row.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func newReconcileCommand(kube *genericclioptions.ConfigFlags) *cobra.Command {
	var withSource bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "reconcile NAME",
		Short: "Ask the operator to reconcile an OsmDeployment now, and wait for the outcome",
		Long: `Request a reconcile of the OsmDeployment NAME (the annotation reconcile.fluxcd.io/requestedAt,
as "flux reconcile" sets it), wait until the operator handled it, then until the OsmDeployment
is Ready or fails, and say which with the Ready message. With --with-source, the source
(GitRepository, OCIRepository or Bucket) is reconciled first, and its new artifact waited for.

` + waitExitStatus,
		Example: `  osmops reconcile osm-gitops -n telco --with-source`,
		Args:    cobra.ExactArgs(1),
		RunE: onDeployment(kube, &timeout, func(ctx context.Context, c client.Client, obj *gitopsv1alpha1.OsmDeployment, out io.Writer) error {
			if obj.Spec.Suspend {
				return fmt.Errorf("OsmDeployment %s/%s is suspended: resume it first (osmops resume %s)", obj.Namespace, obj.Name, obj.Name)
			}
			if withSource {
				if err := reconcileSource(ctx, c, obj, out); err != nil {
					return err
				}
			}
			return requestAndWait(ctx, c, obj, out, nil)
		}),
	}
	cmd.Flags().BoolVar(&withSource, "with-source", false, "reconcile the source first and wait for its artifact")
	cmd.Flags().DurationVar(&timeout, "timeout", defaultTimeout, "how long to wait for each step")
	return cmd
}

// reconcileSource requests a reconcile of the OsmDeployment's source and waits until the
// source handled it and is Ready, as `flux reconcile source` does.
func reconcileSource(ctx context.Context, c client.Client, obj *gitopsv1alpha1.OsmDeployment, out io.Writer) error {
	src, known := pipeline.NewSource(obj.Spec.SourceRef.Kind)
	if !known {
		return fmt.Errorf("source kind %q is not supported", obj.Spec.SourceRef.Kind)
	}
	key := types.NamespacedName{Namespace: obj.GetSourceNamespace(), Name: obj.Spec.SourceRef.Name}
	if err := c.Get(ctx, key, src); err != nil {
		return fmt.Errorf("%s %s: %w", obj.Spec.SourceRef.Kind, key, err)
	}
	printf(out, "► annotating %s %s\n", obj.Spec.SourceRef.Kind, key)
	token, err := requestReconcile(ctx, c, src, nil)
	if err != nil {
		return err
	}
	printf(out, "◎ waiting for %s %s\n", obj.Spec.SourceRef.Kind, key)
	err = wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, key, src); err != nil {
			return false, err
		}
		handled, _ := object.GetStatusLastHandledReconcileAt(src)
		return handled == token && !conditions.IsUnknown(src, meta.ReadyCondition), nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %s %s: %w", obj.Spec.SourceRef.Kind, key, err)
	}
	if !conditions.IsReady(src) {
		return &exitError{code: ExitFindings, err: fmt.Errorf("%s %s is not Ready: %s", obj.Spec.SourceRef.Kind, key, conditions.GetMessage(src, meta.ReadyCondition))}
	}
	revision := "(no artifact)"
	if artifact := src.GetArtifact(); artifact != nil {
		revision = artifact.Revision
	}
	printf(out, "✔ fetched revision %s\n", revision)
	return nil
}

// requestReconcile sets the reconcile request annotation to a new token, in one patch with
// the changes change (when not nil) makes to obj, and returns the token.
func requestReconcile[T client.Object](ctx context.Context, c client.Client, obj T, change func(T)) (string, error) {
	token := time.Now().Format(time.RFC3339Nano)
	patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
	if change != nil {
		change(obj)
	}
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[meta.ReconcileRequestAnnotation] = token
	obj.SetAnnotations(annotations)
	if err := c.Patch(ctx, obj, patch); err != nil {
		return "", fmt.Errorf("requesting a reconcile of %s: %w", obj.GetName(), err)
	}
	return token, nil
}

// requestAndWait requests a reconcile of the OsmDeployment (after change, when not nil, made
// to it in the same patch), waits until the operator handled it and the outcome is known, and
// reports it.
func requestAndWait(ctx context.Context, c client.Client, obj *gitopsv1alpha1.OsmDeployment, out io.Writer, change func(*gitopsv1alpha1.OsmDeployment)) error {
	key := client.ObjectKeyFromObject(obj)
	printf(out, "► annotating OsmDeployment %s\n", key)
	token, err := requestReconcile(ctx, c, obj, change)
	if err != nil {
		return err
	}
	printf(out, "◎ waiting for OsmDeployment %s\n", key)
	var verdict outcome
	err = wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, key, obj); err != nil {
			return false, err
		}
		verdict = outcomeOf(obj, token)
		return verdict != pending, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for OsmDeployment %s (Ready: %q): %w", key, conditions.GetMessage(obj, meta.ReadyCondition), err)
	}
	return reportOutcome(out, obj, verdict)
}

// outcome is where a requested reconcile stands.
type outcome int

const (
	pending outcome = iota
	succeeded
	failed
)

// outcomeOf tells where the reconcile requested with token stands: pending until the operator
// handled the request for this generation and no longer reconciles, then succeeded when Ready,
// failed when Ready is False or Stalled.
func outcomeOf(obj *gitopsv1alpha1.OsmDeployment, token string) outcome {
	switch {
	case obj.Status.LastHandledReconcileAt != token || obj.Status.ObservedGeneration != obj.Generation:
		return pending
	case conditions.IsStalled(obj):
		return failed
	case conditions.IsReconciling(obj) || conditions.IsUnknown(obj, meta.ReadyCondition):
		return pending
	case conditions.IsReady(obj):
		return succeeded
	}
	return failed
}

// reportOutcome says how the reconcile ended: an error (ExitFindings) when it failed.
func reportOutcome(out io.Writer, obj *gitopsv1alpha1.OsmDeployment, verdict outcome) error {
	ready := conditions.Get(obj, meta.ReadyCondition)
	if verdict == succeeded {
		printf(out, "✔ %s\n", ready.Message)
		return nil
	}
	reason, message := "", ""
	if ready != nil {
		reason, message = ready.Reason, ready.Message
	}
	if stalled := conditions.Get(obj, meta.StalledCondition); stalled != nil && stalled.Status == "True" {
		reason, message = stalled.Reason, stalled.Message
	}
	return &exitError{code: ExitFindings, err: fmt.Errorf("OsmDeployment %s/%s failed (%s): %s", obj.Namespace, obj.Name, reason, message)}
}

func newSuspendCommand(kube *genericclioptions.ConfigFlags) *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "suspend NAME",
		Short: "Suspend an OsmDeployment: nothing is applied or pruned until it is resumed",
		Long:  `Set spec.suspend of the OsmDeployment NAME: the operator applies, prunes and checks nothing for it until "osmops resume".`,
		Args:  cobra.ExactArgs(1),
		RunE: onDeployment(kube, &timeout, func(ctx context.Context, c client.Client, obj *gitopsv1alpha1.OsmDeployment, out io.Writer) error {
			patch := client.MergeFrom(obj.DeepCopy())
			obj.Spec.Suspend = true
			if err := c.Patch(ctx, obj, patch); err != nil {
				return err
			}
			printf(out, "✔ OsmDeployment %s/%s suspended\n", obj.Namespace, obj.Name)
			return nil
		}),
	}
	cmd.Flags().DurationVar(&timeout, "timeout", defaultTimeout, "bound on the command")
	return cmd
}

func newResumeCommand(kube *genericclioptions.ConfigFlags) *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "resume NAME",
		Short: "Resume a suspended OsmDeployment and wait for its reconcile",
		Long: `Unset spec.suspend of the OsmDeployment NAME and request a reconcile, then wait for its outcome
as reconcile does.

` + waitExitStatus,
		Args: cobra.ExactArgs(1),
		RunE: onDeployment(kube, &timeout, func(ctx context.Context, c client.Client, obj *gitopsv1alpha1.OsmDeployment, out io.Writer) error {
			return requestAndWait(ctx, c, obj, out, func(obj *gitopsv1alpha1.OsmDeployment) { obj.Spec.Suspend = false })
		}),
	}
	cmd.Flags().DurationVar(&timeout, "timeout", defaultTimeout, "how long to wait")
	return cmd
}

func newEventsCommand(kube *genericclioptions.ConfigFlags) *cobra.Command {
	return &cobra.Command{
		Use:     "events NAME",
		Short:   "Print the events of an OsmDeployment, oldest first",
		Example: `  osmops events osm-gitops -n telco`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, namespace, err := kubeClient(kube)
			if err != nil {
				return err
			}
			var list corev1.EventList
			if err := c.List(cmd.Context(), &list, client.InNamespace(namespace), client.MatchingFields{
				"involvedObject.kind": gitopsv1alpha1.OsmDeploymentKind, "involvedObject.name": args[0],
			}); err != nil {
				return err
			}
			RenderEvents(cmd.OutOrStdout(), list.Items, time.Now())
			return nil
		},
	}
}

// RenderEvents prints the events oldest first, with their age at now, as `flux events` does.
func RenderEvents(w io.Writer, events []corev1.Event, now time.Time) {
	events = slices.Clone(events)
	slices.SortStableFunc(events, func(a, b corev1.Event) int { return lastSeen(a).Compare(lastSeen(b)) })
	table := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(table, "LAST SEEN\tTYPE\tREASON\tOBJECT\tMESSAGE")
	for _, e := range events {
		age := "<unknown>"
		if seen := lastSeen(e); !seen.IsZero() {
			age = duration.HumanDuration(now.Sub(seen))
		}
		printf(table, "%s\t%s\t%s\t%s/%s\t%s\n", age, e.Type, e.Reason, e.InvolvedObject.Kind, e.InvolvedObject.Name, oneLine(e.Message))
	}
	_ = table.Flush()
}

// lastSeen is when an event last happened: its series' or its own last time.
func lastSeen(e corev1.Event) time.Time {
	switch {
	case e.Series != nil:
		return e.Series.LastObservedTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.FirstTimestamp.Time
}
