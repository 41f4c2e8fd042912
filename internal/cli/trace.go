package cli

import (
	"bytes"
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/engine"
	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/osm"
	"github.com/osmops/osmops/internal/osmconn"
	"github.com/osmops/osmops/internal/pipeline"
	"github.com/osmops/osmops/internal/printable"
)

// Bounds of what the trace shows of OSM: the newest operations of each NS instance (OSM keeps
// them all, for as long as the instance lives), and the length of OSM's message of each; and of
// each line of the text, where several fields that OSM, Git or a tenant wrote, escaped, meet.
const (
	maxTracedOperations = 10
	maxTracedMessage    = 512
	maxTracedLine       = 1024
)

// Trace is the tree from an OsmDeployment to the OSM operations of its NS instances, as
// `osmops trace` shows it: what the status records, joined with what OSM answers.
type Trace struct {
	Deployment string `json:"deployment"`
	Ready      string `json:"ready"`
	Reason     string `json:"reason,omitempty"`
	Message    string `json:"message,omitempty"`
	// Source is "<kind> <namespace>/<name>"; Artifact its artifact's revision now, "" when
	// unknown.
	Source            string `json:"source"`
	Artifact          string `json:"artifact,omitempty"`
	AppliedRevision   string `json:"appliedRevision,omitempty"`
	AttemptedRevision string `json:"attemptedRevision,omitempty"`
	// Cluster is the OsmCluster's name, OSM its NBI URL and project.
	Cluster string `json:"cluster"`
	OSM     string `json:"osm,omitempty"`
	// OSMError says why OSM was not read: the trace then shows what the status knows.
	OSMError string `json:"osmError,omitempty"`
	// OriginsError says why the origins of the declarations were not read (the source's
	// artifact, its variables or its values).
	OriginsError string                         `json:"originsError,omitempty"`
	Instances    []TracedInstance               `json:"nsInstances"`
	History      []gitopsv1alpha1.ApplySnapshot `json:"history,omitempty"`
}

// TracedInstance is an NS instance of the inventory, with what OSM runs of it.
type TracedInstance struct {
	Name string `json:"name"`
	ID   string `json:"id,omitempty"`
	// State and Reason are the inventory's; Digest is that of the declaration applied.
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
	Digest string `json:"digest,omitempty"`
	// Origins are where its declaration in the source's artifact now comes from: Git, a
	// Secret or ConfigMap of valuesFrom, a variable (never a value).
	Origins []TracedOrigin `json:"origins,omitempty"`
	// recordedOrigins are the inventory's fingerprints of the origins of the declaration the
	// instance last ran in full.
	recordedOrigins string
	// NSState is OSM's nsState of the record, "" when OSM was not read or lists none.
	NSState    string            `json:"nsState,omitempty"`
	VNFs       []TracedVNF       `json:"vnfs,omitempty"`
	Operations []TracedOperation `json:"operations,omitempty"`
	// OperationsOmitted counts its older operations, not shown.
	OperationsOmitted int `json:"operationsOmitted,omitempty"`
}

// TracedOrigin is where an NS instance's declaration comes from; Applied is false when the
// declaration changed since it was applied and this origin is where, so that a change not
// applied yet names its origin.
type TracedOrigin struct {
	Name    string `json:"name"`
	Applied bool   `json:"applied"`
}

// TracedVNF is a VNF record of an NS instance.
type TracedVNF struct {
	Member string      `json:"memberVnfIndex"`
	VNFD   string      `json:"vnfd"`
	KDUs   []TracedKDU `json:"kdus,omitempty"`
}

// TracedKDU is a KDU as OSM runs it: its chart and a digest of its values (the instantiation
// values, then each completed upgrade's). What a KDU runs may hold a Secret's value, of this
// revision or an earlier one: the digest is keyed by the OsmCluster's password, so that two
// traces with the same credentials compare and nobody without them can test a guess.
type TracedKDU struct {
	Name         string `json:"name"`
	Chart        string `json:"chart,omitempty"`
	ValuesDigest string `json:"valuesDigest,omitempty"`
}

// TracedOperation is an OSM operation of an NS instance, with the apply of status.history that
// started it, when the history still lists it.
type TracedOperation struct {
	ID      string     `json:"id"`
	Type    string     `json:"type"`
	State   string     `json:"state"`
	Start   *time.Time `json:"start,omitempty"`
	End     *time.Time `json:"end,omitempty"`
	Message string     `json:"message,omitempty"`
	// Revision and PlanDigest are those of the apply that started it.
	Revision   string `json:"revision,omitempty"`
	PlanDigest string `json:"planDigest,omitempty"`
}

func newTraceCommand(kube *genericclioptions.ConfigFlags) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "trace [NAMESPACE/]NAME",
		Short: "Follow an OsmDeployment to its revision, NS instances, KDUs and OSM operations",
		Long: `Show the tree from the OsmDeployment NAME (in the namespace of -n, or NAMESPACE) to its source
revision, each NS instance of its inventory (where its declaration comes from: Git, a Secret or
ConfigMap of valuesFrom, a variable; and which of them changed since it was applied), their
VNFs and KDUs (chart, digest of the values OSM runs) and their newest OSM operations (type, state, start, end, OSM's message), each with
the revision and plan that started it when status.history lists it; then status.history. It
reads the status and OSM (GET requests only, with the OsmCluster's credentials) and sends no
change to either. When OSM cannot be read, it shows what the status knows and says why. The
text shows revisions and digests short, -o json in full.

Exit status: 0 shown, 2 error.`,
		Example: `  osmops trace telco/osm-gitops
  osmops trace osm-gitops -n telco -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "text" && output != "json" {
				return fmt.Errorf("--output %q: want text or json", output)
			}
			trace, err := readTrace(cmd.Context(), kube, args[0])
			if err != nil {
				return err
			}
			if output == "json" {
				return RenderTraceJSON(cmd.OutOrStdout(), trace)
			}
			RenderTrace(cmd.OutOrStdout(), trace)
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "text or json")
	return cmd
}

// readTrace reads the OsmDeployment named by arg, its source and OsmCluster, then what OSM runs
// of its inventory.
func readTrace(ctx context.Context, kube *genericclioptions.ConfigFlags, arg string) (Trace, error) {
	c, namespace, err := kubeClient(kube)
	if err != nil {
		return Trace{}, err
	}
	key := types.NamespacedName{Namespace: namespace, Name: arg}
	if ns, name, found := strings.Cut(arg, "/"); found {
		key = types.NamespacedName{Namespace: ns, Name: name}
	}
	obj := &gitopsv1alpha1.OsmDeployment{}
	if err := c.Get(ctx, key, obj); err != nil {
		return Trace{}, fmt.Errorf("OsmDeployment %s: %w", key, err)
	}
	trace := TraceOf(obj, artifactRevision(ctx, c, obj))
	if rev, err := currentRevision(ctx, kube, c, obj); err != nil {
		trace.OriginsError = cut(err.Error(), maxTracedMessage)
	} else {
		trace = trace.WithOrigins(rev)
	}
	cluster := &gitopsv1alpha1.OsmCluster{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: obj.Spec.ClusterRef.Name}, cluster); err != nil {
		trace.OSMError = fmt.Sprintf("OsmCluster %s: %v", obj.Spec.ClusterRef.Name, err)
		return trace, nil
	}
	trace.OSM = cluster.Spec.URL + ", project " + cluster.GetProject()
	observed, operations, valuesKey, err := readOSM(ctx, c, cluster, obj)
	if err != nil {
		trace.OSMError = err.Error()
		return trace, nil
	}
	return trace.WithOSM(observed, operations, valuesKey), nil
}

// currentRevision is the revision of the source's artifact now, as the operator reads it.
func currentRevision(ctx context.Context, kube *genericclioptions.ConfigFlags, c client.Client, obj *gitopsv1alpha1.OsmDeployment) (*gitops.Revision, error) {
	checkout, err := fetchSourceArtifact(ctx, kube, c, obj)
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(checkout.Dir) }()
	return pipeline.LoadRevision(ctx, c, obj, checkout.Dir)
}

// artifactRevision is the revision of the source's artifact now, "" when it cannot be read.
func artifactRevision(ctx context.Context, c client.Client, obj *gitopsv1alpha1.OsmDeployment) string {
	source, known := pipeline.NewSource(obj.Spec.SourceRef.Kind)
	if !known || c.Get(ctx, types.NamespacedName{Namespace: obj.GetSourceNamespace(), Name: obj.Spec.SourceRef.Name}, source) != nil ||
		source.GetArtifact() == nil {
		return ""
	}
	return source.GetArtifact().Revision
}

// readOSM reads, with GET requests only, the records of the NS instances of the inventory, their
// VNF records and completed upgrades (engine.Observe, as a plan does), and their operations;
// and the key of the values digests, from the OsmCluster's password.
func readOSM(ctx context.Context, c client.Client, cluster *gitopsv1alpha1.OsmCluster, obj *gitopsv1alpha1.OsmDeployment) (
	*engine.Observed, []osm.Operation, []byte, error) {
	var names, ids []string
	if obj.Status.Inventory != nil {
		for _, e := range obj.Status.Inventory.NsInstances {
			names = append(names, e.Name)
			if e.ID != "" {
				ids = append(ids, e.ID)
			}
		}
	}
	if len(names) == 0 {
		return nil, nil, nil, nil
	}
	conn, err := (&osmconn.Pool{Reader: c}).Get(ctx, cluster)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("connecting to the OSM of OsmCluster %s: %w", cluster.Name, err)
	}
	credentials := &corev1.Secret{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: cluster.Namespace, Name: cluster.Spec.CredentialsSecretRef.Name}, credentials); err != nil {
		return nil, nil, nil, fmt.Errorf("reading the credentials of OsmCluster %s: %w", cluster.Name, err)
	}
	key := append([]byte("osmops trace values: "), credentials.Data[gitopsv1alpha1.PasswordSecretKey]...)
	observed, err := engine.Observe(ctx, conn.NBI, engine.Scope{Names: names, WithValues: true})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("reading OSM: %w", err)
	}
	lister, ok := conn.NBI.(interface {
		ListNSOperations(ctx context.Context, nsInstanceIDs ...string) ([]osm.Operation, error)
	})
	if !ok {
		return nil, nil, nil, fmt.Errorf("the client of OsmCluster %s cannot list operations", cluster.Name)
	}
	operations, err := lister.ListNSOperations(ctx, ids...)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("listing the operations of the NS instances: %w", err)
	}
	return observed, operations, key, nil
}

// TraceOf is what the status of obj tells, with the revision of its source's artifact now.
func TraceOf(obj *gitopsv1alpha1.OsmDeployment, artifact string) Trace {
	t := Trace{Deployment: obj.Namespace + "/" + obj.Name, Ready: "Unknown",
		Source:   fmt.Sprintf("%s %s/%s", obj.Spec.SourceRef.Kind, obj.GetSourceNamespace(), obj.Spec.SourceRef.Name),
		Artifact: artifact, AppliedRevision: obj.Status.LastAppliedRevision, AttemptedRevision: obj.Status.LastAttemptedRevision,
		Cluster: obj.Spec.ClusterRef.Name, History: obj.Status.History, Instances: []TracedInstance{}}
	if ready := conditions.Get(obj, meta.ReadyCondition); ready != nil {
		t.Ready, t.Reason, t.Message = string(ready.Status), ready.Reason, ready.Message
	}
	if obj.Status.Inventory != nil {
		for _, e := range obj.Status.Inventory.NsInstances {
			t.Instances = append(t.Instances, TracedInstance{Name: e.Name, ID: e.ID, State: string(e.State), Reason: e.Reason,
				Digest: e.Digest, recordedOrigins: e.Origins})
		}
	}
	return t
}

// WithOrigins adds to the instances of the trace where their declarations in rev come from,
// and, of a declaration that changed since applied, which of them changed. Its digest tells
// whether it changed (rev is read as the operator reads it, so that its digests are those the
// inventory records), never the fingerprints alone: those are of the declaration the instance
// last ran in full, which the operator keeps through the KDU upgrades of a change, and on an
// instance no plan read since.
func (t Trace) WithOrigins(rev *gitops.Revision) Trace {
	declared := map[string]gitops.NsInstance{}
	for _, ns := range rev.NsInstances {
		declared[ns.Name] = ns
	}
	instances := slices.Clone(t.Instances)
	for i := range instances {
		in := &instances[i]
		ns, found := declared[in.Name]
		if !found {
			continue
		}
		unchanged := ns.Digest() == in.Digest
		recorded := strings.Fields(in.recordedOrigins)
		for _, o := range ns.Origins {
			in.Origins = append(in.Origins, TracedOrigin{Name: o.Name, Applied: unchanged || slices.Contains(recorded, o.Fingerprint)})
		}
	}
	t.Instances = instances
	return t
}

// WithOSM adds to the instances of the trace what OSM runs of them (nil when not read): the NS
// record's state, the VNFs and KDUs (their values digested with key), and the newest
// operations, joined with status.history by operation id.
func (t Trace) WithOSM(o *engine.Observed, operations []osm.Operation, key []byte) Trace {
	applies := map[string]gitopsv1alpha1.ApplySnapshot{}
	for _, snapshot := range t.History {
		for _, op := range snapshot.Operations {
			applies[op.ID] = snapshot
		}
	}
	byInstance := map[string][]osm.Operation{}
	for _, op := range operations {
		byInstance[op.NSInstanceID] = append(byInstance[op.NSInstanceID], op)
	}
	instances := slices.Clone(t.Instances)
	for i := range instances {
		in := &instances[i]
		if o != nil {
			if record, found := o.NSInstances[in.ID]; found {
				in.NSState = record.NSState
			}
			in.VNFs = tracedVNFs(o, in.ID, key)
		}
		ops := byInstance[in.ID]
		slices.SortStableFunc(ops, func(a, b osm.Operation) int { return cmp.Compare(b.StartTime, a.StartTime) })
		if len(ops) > maxTracedOperations {
			in.OperationsOmitted = len(ops) - maxTracedOperations
			ops = ops[:maxTracedOperations]
		}
		for _, op := range ops {
			traced := TracedOperation{ID: op.ID, Type: op.LCMOperationType, State: op.OperationState,
				Start: timeOf(op.StartedAt()), Message: cut(operationMessage(op), maxTracedMessage)}
			if op.Done() {
				traced.End = timeOf(op.StatusEnteredAt())
			}
			if snapshot, found := applies[op.ID]; found {
				traced.Revision, traced.PlanDigest = snapshot.Revision, snapshot.PlanDigest
			}
			in.Operations = append(in.Operations, traced)
		}
	}
	t.Instances = instances
	return t
}

// tracedVNFs are the VNFs of the NS instance id as OSM runs them, in OSM's order, their KDUs'
// values digested with key.
func tracedVNFs(o *engine.Observed, id string, key []byte) []TracedVNF {
	vnfs := make([]TracedVNF, 0, len(o.VNFs[id]))
	for _, record := range o.VNFs[id] {
		vnf := TracedVNF{Member: record.MemberVnfIndex, VNFD: record.VnfdRef}
		for _, kdu := range record.KDURecords {
			traced := TracedKDU{Name: kdu.KDUName, Chart: cmp.Or(o.KDUModels[id][record.MemberVnfIndex][kdu.KDUName], kdu.HelmChart)}
			if values, found := o.KDUValues[id][record.MemberVnfIndex][kdu.KDUName]; found {
				mac := hmac.New(sha256.New, key)
				mac.Write([]byte(values))
				traced.ValuesDigest = "hmac-sha256:" + hex.EncodeToString(mac.Sum(nil))
			}
			vnf.KDUs = append(vnf.KDUs, traced)
		}
		vnfs = append(vnfs, vnf)
	}
	return vnfs
}

// operationMessage is what OSM says of an operation: its error, else its detailed status, each
// when it says something.
func operationMessage(op osm.Operation) string {
	return cmp.Or(sayingSomething(string(op.ErrorMessage)), sayingSomething(string(op.DetailedStatus)))
}

// sayingSomething is text, or "" when it says nothing: LCM writes the revision of the Helm
// release a KDU upgrade or rollback made as the detailed status (a bare number), and an NBI
// fills these fields loosely (null, an empty object, Python's None).
func sayingSomething(text string) string {
	trimmed := strings.TrimSpace(text)
	if _, err := strconv.ParseFloat(trimmed, 64); err == nil {
		return ""
	}
	switch strings.ToLower(trimmed) {
	case "", "null", "none", "{}", "[]", `""`:
		return ""
	}
	return text
}

// timeOf is t, or nil when OSM gave none.
func timeOf(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// cut returns s cut to at most limit characters, ending in "…" when cut.
func cut(s string, limit int) string {
	if runes := []rune(s); len(runes) > limit {
		return string(runes[:limit-1]) + "…"
	}
	return s
}

// RenderTrace prints the trace as a tree, each line cut to maxTracedLine characters.
func RenderTrace(w io.Writer, t Trace) {
	var tree strings.Builder
	renderTree(&tree, t)
	for line := range strings.Lines(tree.String()) {
		fmt.Fprintln(w, cut(strings.TrimSuffix(line, "\n"), maxTracedLine))
	}
}

// renderTree prints the trace as a tree, its revisions and digests short (ShortRevision): the
// JSON has them in full.
func renderTree(w io.Writer, t Trace) {
	printf(w, "OsmDeployment %s: Ready %s", t.Deployment, t.Ready)
	if t.Reason != "" {
		printf(w, " (%s): %s", t.Reason, oneLine(t.Message))
	}
	printf(w, "\n├─ %s: applied %s, attempted %s", t.Source, orNone(gitopsv1alpha1.ShortRevision(t.AppliedRevision)),
		orNone(gitopsv1alpha1.ShortRevision(t.AttemptedRevision)))
	if t.Artifact != "" {
		printf(w, ", artifact now %s", gitopsv1alpha1.ShortRevision(t.Artifact))
	}
	printf(w, "\n├─ OsmCluster %s", t.Cluster)
	if t.OSM != "" {
		printf(w, ": %s", t.OSM)
	}
	if t.OSMError != "" {
		printf(w, "\n│  ! OSM not read, the status alone is shown: %s", oneLine(t.OSMError))
	}
	if t.OriginsError != "" {
		printf(w, "\n│  ! where the declarations come from not read: %s", oneLine(t.OriginsError))
	}
	fmt.Fprintln(w)
	if len(t.Instances) == 0 {
		fmt.Fprintln(w, "├─ no NS instance in the inventory")
	}
	for _, in := range t.Instances {
		printf(w, "├─ NS instance %s (%s", in.Name, orNone(in.ID))
		if in.NSState != "" {
			printf(w, ", OSM %s", in.NSState)
		}
		printf(w, "): %s", in.State)
		if in.Reason != "" {
			printf(w, ": %s", oneLine(in.Reason))
		}
		printf(w, "\n│  │ declaration %s", orNone(gitopsv1alpha1.ShortRevision(in.Digest)))
		if len(in.Origins) > 0 {
			printf(w, ", from %s", originsText(in.Origins))
		}
		fmt.Fprintln(w)
		for _, vnf := range in.VNFs {
			printf(w, "│  ├─ VNF %s (VNFD %s)\n", vnf.Member, vnf.VNFD)
			for i, kdu := range vnf.KDUs {
				branch := "├─"
				if i == len(vnf.KDUs)-1 {
					branch = "└─"
				}
				printf(w, "│  │  %s KDU %s: chart %s, values %s\n", branch, kdu.Name, orNone(kdu.Chart), orNone(gitopsv1alpha1.ShortRevision(kdu.ValuesDigest)))
			}
		}
		for _, op := range in.Operations {
			printf(w, "│  ├─ %s %s %s, %s → %s", op.Type, op.ID, op.State, timeText(op.Start), timeText(op.End))
			if op.Revision != "" {
				printf(w, ", revision %s (plan %s)", gitopsv1alpha1.ShortRevision(op.Revision), gitopsv1alpha1.ShortRevision(op.PlanDigest))
			}
			if op.Message != "" {
				printf(w, ": %s", oneLine(op.Message))
			}
			fmt.Fprintln(w)
		}
		if in.OperationsOmitted > 0 {
			printf(w, "│  ├─ and %d older operation(s)\n", in.OperationsOmitted)
		}
	}
	printf(w, "└─ history (status.history, newest first)\n")
	if len(t.History) == 0 {
		fmt.Fprintln(w, "   no apply recorded")
	}
	for _, snapshot := range t.History {
		var end *time.Time
		if snapshot.EndTime != nil {
			end = &snapshot.EndTime.Time
		}
		printf(w, "   ├─ %s %s, %s → %s, plan %s", gitopsv1alpha1.ShortRevision(snapshot.Revision), snapshot.Outcome, timeText(&snapshot.StartTime.Time), timeText(end),
			gitopsv1alpha1.ShortRevision(snapshot.PlanDigest))
		if snapshot.Message != "" {
			printf(w, ": %s", oneLine(snapshot.Message))
		}
		fmt.Fprintln(w)
		for _, op := range snapshot.Operations {
			printf(w, "   │  %s %s on %s: %s", op.Type, op.ID, op.NsInstance, op.State)
			if op.Message != "" {
				printf(w, ": %s", oneLine(op.Message))
			}
			fmt.Fprintln(w)
		}
		if snapshot.OperationsOmitted > 0 {
			printf(w, "   │  and %d more operation(s)\n", snapshot.OperationsOmitted)
		}
	}
}

// originsText names the origins, and those whose change is not applied yet.
func originsText(origins []TracedOrigin) string {
	names := make([]string, 0, len(origins))
	var changed []string
	for _, o := range origins {
		names = append(names, o.Name)
		if !o.Applied {
			changed = append(changed, o.Name)
		}
	}
	text := strings.Join(names, ", ")
	if len(changed) > 0 {
		text += " (changed since applied: " + strings.Join(changed, ", ") + ")"
	}
	return text
}

// timeText is t in RFC 3339, UTC, or "…" when not known (not ended yet).
func timeText(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "…"
	}
	return t.UTC().Format(time.RFC3339)
}

// RenderTraceJSON prints the trace as indented JSON. Every character that printable escapes
// (controls, formatting characters) is written as a JSON escape, which encoding/json leaves
// raw for most of them: the output stays valid JSON and acts on no terminal.
func RenderTraceJSON(w io.Writer, t Trace) error {
	encoded, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	var out bytes.Buffer
	for _, r := range string(encoded) {
		if r != '\n' && printable.String(string(r)) != string(r) {
			for _, unit := range utf16.Encode([]rune{r}) {
				fmt.Fprintf(&out, `\u%04x`, unit)
			}
			continue
		}
		out.WriteRune(r)
	}
	out.WriteByte('\n')
	_, err = w.Write(out.Bytes())
	return err
}
