package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/engine"
	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/nbisim"
	"github.com/osmops/osmops/internal/osm"
	"github.com/osmops/osmops/internal/pipeline"
	"github.com/osmops/osmops/internal/testing/artifactserver"
	"github.com/osmops/osmops/internal/testing/osmtenant"
)

// Revisions and digests as the operator records them, in full.
const (
	revision1   = "main@sha1:1111111111111111111111111111111111111111"
	revision2   = "main@sha1:2222222222222222222222222222222222222222"
	declDigest  = "sha256:dec1dec1dec1dec1dec1dec1dec1dec1dec1dec1dec1dec1dec1dec1dec1dec1"
	planDigest1 = "sha256:9b2e9b2e9b2e9b2e9b2e9b2e9b2e9b2e9b2e9b2e9b2e9b2e9b2e9b2e9b2e9b2e"
	planDigest2 = "sha256:77aa77aa77aa77aa77aa77aa77aa77aa77aa77aa77aa77aa77aa77aa77aa77aa"
)

// tracedDeployment is an OsmDeployment that applied two revisions to ldap: the instantiate,
// then an upgrade OSM failed with a message that holds a terminal escape.
func tracedDeployment() *gitopsv1alpha1.OsmDeployment {
	start, end := metav1.Date(2026, 11, 26, 6, 0, 0, 0, time.UTC), metav1.Date(2026, 11, 26, 6, 1, 0, 0, time.UTC)
	obj := &gitopsv1alpha1.OsmDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "telco", Name: "gitops"},
		Spec: gitopsv1alpha1.OsmDeploymentSpec{SourceRef: gitopsv1alpha1.SourceReference{Kind: "GitRepository", Name: "repo"},
			ClusterRef: meta.LocalObjectReference{Name: "osm"}}}
	obj.Status.Conditions = []metav1.Condition{{Type: meta.ReadyCondition, Status: metav1.ConditionFalse, Reason: "OperationFailed", Message: "NS instance ldap failed"}}
	obj.Status.LastAppliedRevision, obj.Status.LastAttemptedRevision = revision1, revision2
	obj.Status.Inventory = &gitopsv1alpha1.Inventory{NsInstances: []gitopsv1alpha1.NsInstanceEntry{
		{Name: "ldap", ID: "ns-1", Digest: declDigest, State: gitopsv1alpha1.NsInstanceFailed}}}
	obj.Status.History = []gitopsv1alpha1.ApplySnapshot{
		{Revision: revision2, PlanDigest: planDigest2, StartTime: start, EndTime: &end, Outcome: gitopsv1alpha1.ApplyFailed,
			Operations: []gitopsv1alpha1.HistoryOperation{{ID: "op-2", Type: "action", NsInstance: "ldap", State: "FAILED", EndTime: &end, Message: "helm: \x1b[31mboom"}}},
		{Revision: revision1, PlanDigest: planDigest1, StartTime: start, EndTime: &start, Outcome: gitopsv1alpha1.ApplySucceeded,
			Operations: []gitopsv1alpha1.HistoryOperation{{ID: "op-1", Type: "instantiate", NsInstance: "ldap", State: "COMPLETED", EndTime: &start}}},
	}
	return obj
}

func TestRenderTrace(t *testing.T) {
	obj := tracedDeployment()
	observed := &engine.Observed{
		NSInstances: map[string]osm.NSInstance{"ns-1": {ID: "ns-1", Name: "ldap", NSState: "READY"}},
		VNFs: map[string][]osm.VNFInstance{"ns-1": {{MemberVnfIndex: "openldap", VnfdRef: "openldap_knf",
			KDURecords: []osm.KDURecord{{KDUName: "ldap", HelmChart: "stable/openldap:1.2.7"}, {KDUName: "exporter", HelmChart: "prom/exporter"}}}}},
		KDUValues: map[string]map[string]map[string]string{"ns-1": {"openldap": {"ldap": `{"replicaCount":"2"}`}}},
		KDUModels: map[string]map[string]map[string]string{"ns-1": {"openldap": {"ldap": "stable/openldap:1.2.8"}}},
	}
	operations := []osm.Operation{
		{ID: "op-1", NSInstanceID: "ns-1", LCMOperationType: "instantiate", OperationState: "COMPLETED", StartTime: 1795672800, StatusEnteredTime: 1795672810, DetailedStatus: "Done"},
		{ID: "op-2", NSInstanceID: "ns-1", LCMOperationType: "action", OperationState: "FAILED", StartTime: 1795672860, StatusEnteredTime: 1795672870,
			ErrorMessage: "helm: \x1b[31mboom"},
		{ID: "op-0", NSInstanceID: "other", LCMOperationType: "instantiate", OperationState: "COMPLETED", StartTime: 1795672800},
		// LCM's detailed status of a KDU upgrade: the revision of the Helm release, which says nothing.
		{ID: "op-3", NSInstanceID: "ns-1", LCMOperationType: "action", OperationState: "COMPLETED", StartTime: 1795672920, StatusEnteredTime: 1795672930,
			DetailedStatus: "2"},
	}
	for _, test := range []struct {
		name  string
		trace Trace
		want  string
	}{
		{"OSM not read", func() Trace {
			trace := TraceOf(obj, "main@sha1:3333333333333333333333333333333333333333")
			trace.OSM, trace.OSMError = "https://osm:9999, project admin", "connecting to the OSM of OsmCluster osm: Secret osm-credentials not found"
			return trace
		}(), lines(
			"OsmDeployment telco/gitops: Ready False (OperationFailed): NS instance ldap failed",
			"├─ GitRepository telco/repo: applied main@1111111, attempted main@2222222, artifact now main@3333333",
			"├─ OsmCluster osm: https://osm:9999, project admin",
			"│  ! OSM not read, the status alone is shown: connecting to the OSM of OsmCluster osm: Secret osm-credentials not found",
			"├─ NS instance ldap (ns-1): Failed",
			"│  │ declaration sha256:dec1dec",
			"└─ history (status.history, newest first)",
			`   ├─ main@2222222 Failed, 2026-11-26T06:00:00Z → 2026-11-26T06:01:00Z, plan sha256:77aa77a`,
			`   │  action op-2 on ldap: FAILED: helm: \x1b[31mboom`,
			`   ├─ main@1111111 Succeeded, 2026-11-26T06:00:00Z → 2026-11-26T06:00:00Z, plan sha256:9b2e9b2`,
			`   │  instantiate op-1 on ldap: COMPLETED`,
		)},
		{"joined with OSM", TraceOf(obj, "").WithOSM(observed, operations, []byte("key")), lines(
			"OsmDeployment telco/gitops: Ready False (OperationFailed): NS instance ldap failed",
			"├─ GitRepository telco/repo: applied main@1111111, attempted main@2222222",
			"├─ OsmCluster osm",
			"├─ NS instance ldap (ns-1, OSM READY): Failed",
			"│  │ declaration sha256:dec1dec",
			"│  ├─ VNF openldap (VNFD openldap_knf)",
			"│  │  ├─ KDU ldap: chart stable/openldap:1.2.8, values hmac-sha256:9dbb846",
			"│  │  └─ KDU exporter: chart prom/exporter, values (none)",
			"│  ├─ action op-3 COMPLETED, 2026-11-26T06:02:00Z → 2026-11-26T06:02:10Z",
			`│  ├─ action op-2 FAILED, 2026-11-26T06:01:00Z → 2026-11-26T06:01:10Z, revision main@2222222 (plan sha256:77aa77a): helm: \x1b[31mboom`,
			"│  ├─ instantiate op-1 COMPLETED, 2026-11-26T06:00:00Z → 2026-11-26T06:00:10Z, revision main@1111111 (plan sha256:9b2e9b2): Done",
			"└─ history (status.history, newest first)",
			`   ├─ main@2222222 Failed, 2026-11-26T06:00:00Z → 2026-11-26T06:01:00Z, plan sha256:77aa77a`,
			`   │  action op-2 on ldap: FAILED: helm: \x1b[31mboom`,
			`   ├─ main@1111111 Succeeded, 2026-11-26T06:00:00Z → 2026-11-26T06:00:00Z, plan sha256:9b2e9b2`,
			`   │  instantiate op-1 on ldap: COMPLETED`,
		)},
		{"nothing applied yet", TraceOf(&gitopsv1alpha1.OsmDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "telco", Name: "new"},
			Spec: gitopsv1alpha1.OsmDeploymentSpec{SourceRef: gitopsv1alpha1.SourceReference{Kind: "GitRepository", Name: "repo"},
				ClusterRef: meta.LocalObjectReference{Name: "osm"}}}, "").WithOSM(nil, nil, nil), lines(
			"OsmDeployment telco/new: Ready Unknown",
			"├─ GitRepository telco/repo: applied (none), attempted (none)",
			"├─ OsmCluster osm",
			"├─ no NS instance in the inventory",
			"└─ history (status.history, newest first)",
			"   no apply recorded",
		)},
	} {
		t.Run(test.name, func(t *testing.T) {
			var out strings.Builder
			RenderTrace(&out, test.trace)
			if diff := cmp.Diff(test.want, out.String()); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}

// Of two NS instances, only the one whose declaration differs now from the one applied (its
// digest) says where it changed. The inventory's fingerprints are of the declaration each last
// ran in full, which the operator keeps through an upgrade, and on an instance that later
// revisions do not touch: right after an apply, they do not match the files of either.
func TestTraceOfChangesSinceApplied(t *testing.T) {
	ldap := gitops.NsInstance{Name: "ldap", NsdName: "openldap_ns", VnfName: "openldap", VimAccountName: "site1",
		KDU:     gitops.KDU{Name: "ldap", Params: map[string]any{"replicaCount": "2"}},
		Origins: []gitops.Origin{{Name: gitops.OriginGit, Fingerprint: "a11a11"}, {Name: "Secret ldap-admin", Fingerprint: "5ec5ec"}}}
	stack := gitops.NsInstance{Name: "ldap-stack", NsdName: "ldap_stack_ns", VimAccountName: "site1",
		Origins: []gitops.Origin{{Name: gitops.OriginGit, Fingerprint: "b22b22"}}}
	obj := tracedDeployment()
	obj.Status.Inventory.NsInstances = []gitopsv1alpha1.NsInstanceEntry{
		// Upgraded to the declaration of the revision: the origins recorded are of the one before.
		{Name: "ldap", ID: "ns-1", Digest: ldap.Digest(), Origins: "0ld0ld 5ec5ec", State: gitopsv1alpha1.NsInstanceReady},
		// Its file changed since it was applied: its upgrade is to come.
		{Name: "ldap-stack", ID: "ns-2", Digest: declDigest, Origins: "0ld222", State: gitopsv1alpha1.NsInstanceReady},
	}
	trace := TraceOf(obj, "").WithOrigins(&gitops.Revision{NsInstances: []gitops.NsInstance{ldap, stack}})
	want := map[string][]TracedOrigin{
		"ldap":       {{Name: "Git", Applied: true}, {Name: "Secret ldap-admin", Applied: true}},
		"ldap-stack": {{Name: "Git", Applied: false}},
	}
	got := map[string][]TracedOrigin{}
	for _, in := range trace.Instances {
		got[in.Name] = in.Origins
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("origins (-want +got):\n%s", diff)
	}
	var out strings.Builder
	RenderTrace(&out, trace)
	if text := out.String(); !strings.Contains(text, "│  │ declaration "+gitopsv1alpha1.ShortRevision(ldap.Digest())+", from Git, Secret ldap-admin\n") ||
		!strings.Contains(text, "│  │ declaration sha256:dec1dec, from Git (changed since applied: Git)\n") {
		t.Errorf("output:\n%s", text)
	}
}

// OSM's message is its error, else its detailed status, each only when it says something: LCM
// writes the Helm release's revision there, and an NBI null or None.
func TestOperationMessage(t *testing.T) {
	for _, test := range []struct {
		op   osm.Operation
		want string
	}{
		{osm.Operation{DetailedStatus: "Done"}, "Done"},
		{osm.Operation{ErrorMessage: "helm upgrade failed", DetailedStatus: "Done"}, "helm upgrade failed"},
		{osm.Operation{ErrorMessage: "None", DetailedStatus: "Deployed at 2026-11-26"}, "Deployed at 2026-11-26"},
		{osm.Operation{DetailedStatus: "2"}, ""},
		{osm.Operation{DetailedStatus: " 3.0 "}, ""},
		{osm.Operation{DetailedStatus: "null"}, ""},
		{osm.Operation{DetailedStatus: "{}"}, ""},
		{osm.Operation{DetailedStatus: "  "}, ""},
	} {
		if got := operationMessage(test.op); got != test.want {
			t.Errorf("operationMessage(%+v) = %q, want %q", test.op, got, test.want)
		}
	}
}

// No line of the text is longer than maxTracedLine characters, whatever the fields that OSM,
// Git or a tenant wrote hold once escaped: a longer one is cut, the lines after it shown.
func TestRenderTraceBoundsLines(t *testing.T) {
	obj := tracedDeployment()
	obj.Status.Inventory.NsInstances[0].Reason = strings.Repeat("\x1b", maxTracedMessage)
	obj.Status.History[0].Message = strings.Repeat("a long message ", 200)
	var out strings.Builder
	RenderTrace(&out, TraceOf(obj, ""))
	var cuts int
	for line := range strings.Lines(out.String()) {
		line = strings.TrimSuffix(line, "\n")
		if n := len([]rune(line)); n > maxTracedLine {
			t.Errorf("a line of %d characters: %.80s…", n, line)
		}
		if strings.HasSuffix(line, "…") {
			cuts++
		}
	}
	if cuts != 2 || !strings.Contains(out.String(), "…\n│  │ declaration sha256:dec1dec\n") || !strings.HasSuffix(out.String(), "   │  instantiate op-1 on ldap: COMPLETED\n") {
		t.Errorf("%d lines cut, want 2; output:\n%s", cuts, out.String())
	}
}

// The JSON trace is valid JSON that holds OSM's message, with its escape character written as
// a JSON escape, never raw.
func TestRenderTraceJSON(t *testing.T) {
	trace := TraceOf(tracedDeployment(), "").WithOSM(nil, []osm.Operation{
		{ID: "op-2", NSInstanceID: "ns-1", LCMOperationType: "action", OperationState: "FAILED", ErrorMessage: "helm: \x1b[31mboom \u202eevil"}}, nil)
	var out strings.Builder
	if err := RenderTraceJSON(&out, trace); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(out.String(), "\x1b\u202e") {
		t.Errorf("a raw control or formatting character in:\n%s", out.String())
	}
	var decoded Trace
	if err := json.Unmarshal([]byte(out.String()), &decoded); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	if got := decoded.Instances[0].Operations[0]; got.Message != "helm: \x1b[31mboom \u202eevil" || got.Revision != revision2 {
		t.Errorf("the operation read back: %+v", got)
	}
}

// After an apply, the trace shows the NS instance, its KDU and the instantiate operation with
// its OSM id and the revision that started it, reading OSM with the OsmCluster's credentials
// and sending it no change.
func TestTraceOfAnAppliedDeployment(t *testing.T) {
	ctx := context.Background()
	c, kubeconfig := startCluster(t)
	sim, url := startSimulator(t)
	sim.SetOperationDelay(0)
	const namespace, name = "telco", "gitops"
	deployment := osmtenant.Deployment(namespace, name, "osm-gitops")
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}},
		osmtenant.CredentialsSecret(namespace, nbisim.DefaultUsername, nbisim.DefaultPassword),
		osmtenant.Cluster(namespace, url), osmtenant.ValuesSecret(namespace, "ldap-admin", map[string]string{"password": "secret"}), deployment,
	} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	// The operator's apply of the demo repository, and the status it writes.
	identity, err := pipeline.ResolveOwnerIdentity(ctx, c, "")
	if err != nil {
		t.Fatal(err)
	}
	repo := demoRepo(t, nil)
	preview, err := pipeline.PreviewPlan(ctx, c, deployment, repo, identity, "osmops-system")
	if err != nil {
		t.Fatal(err)
	}
	nbi, err := osm.NewClient(url, osm.Credentials{Username: nbisim.DefaultUsername, Password: nbisim.DefaultPassword, Project: nbisim.DefaultProject})
	if err != nil {
		t.Fatal(err)
	}
	result := engine.Apply(ctx, nbi, &preview.Plan, preview.Observed, 1)
	if len(result.Errors) > 0 {
		t.Fatalf("applying the demo repository: %v", result.Errors)
	}
	const revision = "main@sha1:0123456789abcdef0123456789abcdef01234567"
	deployment.Status.Inventory = pipeline.APIInventory(preview.Plan.Inventory)
	snapshot := gitopsv1alpha1.ApplySnapshot{Revision: revision, PlanDigest: preview.Plan.Digest(), StartTime: metav1.Now(), Outcome: gitopsv1alpha1.ApplyRunning}
	instantiates := map[string]string{}
	for _, op := range result.Operations {
		snapshot.Operations = append(snapshot.Operations, gitopsv1alpha1.HistoryOperation{ID: op.ID, Type: op.Type, NsInstance: op.NsInstance, State: osm.OperationProcessing})
		instantiates[op.NsInstance] = op.ID
	}
	for i, e := range deployment.Status.Inventory.NsInstances {
		deployment.Status.Inventory.NsInstances[i].ID = result.NsInstanceIDs[e.Name]
	}
	deployment.Status.History = []gitopsv1alpha1.ApplySnapshot{snapshot}
	if err := c.Status().Update(ctx, deployment); err != nil {
		t.Fatal(err)
	}

	before := sim.Stats()
	code, stdout, stderr := run(t, "trace", namespace+"/"+name, "-o", "json", "--kubeconfig", kubeconfig)
	if code != ExitOK {
		t.Fatalf("exit status %d; stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if after := sim.Stats(); after.MutatingRequests != before.MutatingRequests {
		t.Errorf("the trace sent %d mutating requests", after.MutatingRequests-before.MutatingRequests)
	}
	var trace Trace
	if err := json.Unmarshal([]byte(stdout), &trace); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	if trace.OSMError != "" || len(trace.Instances) == 0 {
		t.Fatalf("trace: %s", stdout)
	}
	for _, in := range trace.Instances {
		if len(in.VNFs) == 0 || len(in.VNFs[0].KDUs) == 0 || in.VNFs[0].KDUs[0].Chart == "" || !strings.HasPrefix(in.VNFs[0].KDUs[0].ValuesDigest, "hmac-sha256:") {
			t.Errorf("NS instance %s: VNFs and KDUs %+v", in.Name, in.VNFs)
		}
		want := TracedOperation{ID: instantiates[in.Name], Type: osm.OperationTypeInstantiate, State: osm.OperationCompleted, Revision: revision, PlanDigest: preview.Plan.Digest()}
		if len(in.Operations) != 1 {
			t.Fatalf("NS instance %s: operations %+v, want its instantiate", in.Name, in.Operations)
		}
		got := in.Operations[0]
		got.Start, got.End, got.Message = nil, nil, ""
		if diff := cmp.Diff(want, got); diff != "" || in.Operations[0].Start == nil {
			t.Errorf("NS instance %s: its operation (-want +got):\n%s", in.Name, diff)
		}
	}
	if trace.OriginsError == "" {
		t.Errorf("origins of a source with no artifact: no error said; trace %s", stdout)
	}

	// With the source's artifact: where each declaration comes from, all applied; then the
	// Secret ldap-admin changed, not applied yet.
	artifacts := artifactserver.NewServer()
	t.Cleanup(artifacts.Close)
	if err := osmtenant.SetArtifact(ctx, c, sourcev1.GitRepositoryKind, namespace, "osm-gitops",
		artifacts.PublishFiles(namespace+"/osm-gitops", filesOf(t, repo))); err != nil {
		t.Fatal(err)
	}
	originsOf := func() map[string][]TracedOrigin {
		t.Helper()
		code, stdout, stderr := run(t, "trace", namespace+"/"+name, "-o", "json", "--kubeconfig", kubeconfig)
		var trace Trace
		if code != ExitOK || json.Unmarshal([]byte(stdout), &trace) != nil || trace.OriginsError != "" {
			t.Fatalf("exit status %d; stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		origins := map[string][]TracedOrigin{}
		for _, in := range trace.Instances {
			origins[in.Name] = in.Origins
		}
		return origins
	}
	applied := originsOf()
	if diff := cmp.Diff([]TracedOrigin{{Name: "Git", Applied: true}, {Name: "Secret ldap-admin", Applied: true}}, applied["ldap"]); diff != "" {
		t.Errorf("origins of ldap (-want +got):\n%s", diff)
	}
	secret := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "ldap-admin"}, secret); err != nil {
		t.Fatal(err)
	}
	secret.Data["password"] = []byte("s3cr3t-n3w")
	if err := c.Update(ctx, secret); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]TracedOrigin{{Name: "Git", Applied: true}, {Name: "Secret ldap-admin", Applied: false}}, originsOf()["ldap"]); diff != "" {
		t.Errorf("origins of ldap after its Secret changed (-want +got):\n%s", diff)
	}
	code, stdout, stderr = run(t, "trace", name, "-n", namespace, "--kubeconfig", kubeconfig)
	if code != ExitOK || !strings.Contains(stdout, "NS instance ldap (") || !strings.Contains(stdout, "instantiate "+instantiates["ldap"]+" COMPLETED") ||
		!strings.Contains(stdout, "KDU ldap: chart ") || !strings.Contains(stdout, "from Git, Secret ldap-admin (changed since applied: Secret ldap-admin)") ||
		strings.Contains(stdout, "s3cr3t-n3w") {
		t.Errorf("text trace: exit %d; stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}
