package controller

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/fluxcd/pkg/runtime/jitter"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/engine"
	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/nameclaims"
	"github.com/osmops/osmops/internal/osm"
	"github.com/osmops/osmops/internal/osmconn"
	"github.com/osmops/osmops/internal/osmpkg"
	"github.com/osmops/osmops/internal/testing/testenv"
)

// readOnlyOSM answers reads from fixed records (or fails them all with err) and counts the
// requests that would change OSM, which it refuses.
type readOnlyOSM struct {
	instances  []osm.NSInstance
	unfinished []osm.Operation
	err        error
	// operationChecks counts the requests for operations; mutations those that change OSM.
	operationChecks, mutations int
}

var errMutation = errors.New("readOnlyOSM: a request that changes OSM")

func (o *readOnlyOSM) GetProject(context.Context) (*osm.Project, error) { return &osm.Project{}, o.err }
func (o *readOnlyOSM) ListNSDescriptors(context.Context) ([]osm.NSDescriptor, error) {
	return nil, o.err
}
func (o *readOnlyOSM) ListVNFDescriptors(context.Context) ([]osm.VNFDescriptor, error) {
	return nil, o.err
}
func (o *readOnlyOSM) ListVIMAccounts(context.Context) ([]osm.VIMAccount, error) { return nil, o.err }
func (o *readOnlyOSM) ListNSInstances(_ context.Context, names ...string) ([]osm.NSInstance, error) {
	var out []osm.NSInstance
	for _, ns := range o.instances {
		for _, name := range names {
			if ns.Name == name {
				out = append(out, ns)
			}
		}
	}
	return out, o.err
}
func (o *readOnlyOSM) ListNSInstancesByParam(_ context.Context, key, value string) ([]osm.NSInstance, error) {
	var out []osm.NSInstance
	for _, ns := range o.instances {
		if string(ns.AdditionalParamsForNs[key]) == value {
			out = append(out, ns)
		}
	}
	return out, o.err
}
func (o *readOnlyOSM) ListVNFInstances(context.Context, ...string) ([]osm.VNFInstance, error) {
	return nil, o.err
}
func (o *readOnlyOSM) ListCompletedActions(context.Context, ...string) ([]osm.Operation, error) {
	return nil, o.err
}
func (o *readOnlyOSM) ListOperationsSince(context.Context, time.Time, ...string) ([]osm.Operation, error) {
	o.operationChecks++
	return o.unfinished, o.err
}
func (o *readOnlyOSM) ListRunningOperations(context.Context, ...string) ([]osm.Operation, error) {
	return nil, o.err
}
func (o *readOnlyOSM) ListCompletedTerminates(context.Context, ...string) ([]osm.Operation, error) {
	return nil, o.err
}
func (o *readOnlyOSM) CreatePackage(context.Context, *osmpkg.Package) (string, error) {
	o.mutations++
	return "", errMutation
}
func (o *readOnlyOSM) UpdatePackage(context.Context, string, *osmpkg.Package) error {
	o.mutations++
	return errMutation
}
func (o *readOnlyOSM) SetPackageUserData(context.Context, osmpkg.Kind, string, map[string]string) error {
	o.mutations++
	return errMutation
}
func (o *readOnlyOSM) CreateNSInstance(context.Context, osm.NSInstanceCreate) (*osm.NSInstanceCreated, error) {
	o.mutations++
	return nil, errMutation
}
func (o *readOnlyOSM) UpgradeKDU(context.Context, string, osm.KDUUpgrade) (string, error) {
	o.mutations++
	return "", errMutation
}
func (o *readOnlyOSM) ChangeVNFPackage(context.Context, string, osm.VNFPackageChange) (string, error) {
	o.mutations++
	return "", errMutation
}
func (o *readOnlyOSM) DeleteNSInstance(context.Context, string, bool) (string, error) {
	o.mutations++
	return "", errMutation
}

// machineCase is an OsmDeployment in one state of the machine: edit sets it up; osm is what OSM
// answers; rev is the revision (none declared when nil); noCluster: its OsmCluster is gone;
// followed: the operations were followed already in this reconcile. state and reason are what
// determineState finds; outcome and conditions, what actForState then ends with and writes.
type machineCase struct {
	name       string
	edit       func(*gitopsv1alpha1.OsmDeployment)
	osm        readOnlyOSM
	rev        *gitops.Revision
	noCluster  bool
	followed   bool
	want       deploymentStatus
	reason     string
	outcome    outcomeKind
	conditions string
}

const machineOwner, machineIdentity = "test-manager", "osm-project-1"

// machineCases are the states the machine can be found in, each reached through its inputs.
func machineCases() []machineCase {
	owner := engine.Owner{Manager: machineOwner, Namespace: "tenant", Name: "ldap"}
	owned := osm.NSInstance{ID: "id-ldap", Name: "ldap", NSState: "READY",
		AdditionalParamsForNs: map[string]osm.LooseString{engine.OwnerParam: osm.LooseString(owner.Marker())}}
	recorded := &gitopsv1alpha1.Inventory{NsInstances: []gitopsv1alpha1.NsInstanceEntry{
		{Name: "ldap", ID: "id-ldap", State: gitopsv1alpha1.NsInstanceReady}}}
	operation := []gitopsv1alpha1.OperationEntry{{ID: "op-1", Type: osm.OperationTypeTerminate, NsInstance: "ldap",
		State: "PROCESSING", StartTime: metav1.Now()}}
	processing := []osm.Operation{{ID: "op-1", OperationState: "PROCESSING"}}
	deleted := func(policy gitopsv1alpha1.DeletionPolicy) func(*gitopsv1alpha1.OsmDeployment) {
		return func(d *gitopsv1alpha1.OsmDeployment) {
			d.DeletionTimestamp = &metav1.Time{Time: time.Now()}
			d.Finalizers = []string{gitopsv1alpha1.OsmDeploymentFinalizer}
			d.Spec.DeletionPolicy = policy
		}
	}
	declaring := &gitops.Revision{NsInstances: []gitops.NsInstance{{Name: "ldap", NsdName: "no_such_nsd", VimAccountName: "vim"}}}

	return []machineCase{
		{name: "suspended", edit: func(d *gitopsv1alpha1.OsmDeployment) { d.Spec.Suspend = true },
			want: statusSuspended, reason: "spec.suspend is set", outcome: outcomeDone, conditions: "Ready=Unknown/Suspended Stalled=True/Suspended"},
		{name: "operations OSM does not answer about", edit: func(d *gitopsv1alpha1.OsmDeployment) { d.Status.Operations = operation },
			osm: readOnlyOSM{err: errors.New("connection refused")}, want: statusOperationsUnknown, reason: "checking OSM operations: connection refused", outcome: outcomeRetryable, conditions: "Ready=False/OSMUnavailable Reconciling=True/OSMUnavailable"},
		{name: "an operation OSM still runs", edit: func(d *gitopsv1alpha1.OsmDeployment) { d.Status.Operations = operation },
			osm: readOnlyOSM{unfinished: processing}, want: statusOperationsRunning, reason: "1 OSM operation(s) run", outcome: outcomeWaiting, conditions: "Ready=Unknown/Progressing Reconciling=True/Progressing"},
		{name: "operations that ended", edit: func(d *gitopsv1alpha1.OsmDeployment) { d.Status.Operations = operation },
			want: statusOperationsEnded, reason: "1 OSM operation(s) ended", outcome: outcomeNext, conditions: "Ready=True/Applied"},
		{name: "the OsmCluster gone since the preconditions", noCluster: true, want: statusReadFailed, outcome: outcomeRetryable, conditions: "",
			reason: `OsmCluster osm: osmclusters.gitops.osmops.io "osm" not found`},
		{name: "OSM cannot be read", rev: declaring, osm: readOnlyOSM{err: errors.New("connection refused")},
			want: statusOSMUnreadable, reason: "observing OSM: listing NS instances: connection refused", outcome: outcomeStalling, conditions: "Ready=False/OSMRequestFailed Stalled=True/OSMRequestFailed"},
		{name: "a revision OSM lacks the NSD of", rev: declaring, want: statusInvalid, outcome: outcomeStalling, conditions: "Ready=False/ValidationFailed Stalled=True/ValidationFailed"},
		{name: "nothing declared, nothing run", want: statusInSync, outcome: outcomeDone, conditions: "Ready=True/Applied"},
		{name: "an owned instance no longer declared, with prune", osm: readOnlyOSM{instances: []osm.NSInstance{owned}},
			edit: func(d *gitopsv1alpha1.OsmDeployment) { d.Spec.Prune, d.Status.Inventory = true, recorded },
			want: statusOutOfSync, outcome: outcomeStalling, conditions: "Ready=False/OSMRequestFailed Stalled=True/OSMRequestFailed"},
		{name: "applied, its health checks not passed yet", edit: func(d *gitopsv1alpha1.OsmDeployment) {
			d.Status.LastAppliedRevision, d.Status.ObservedGeneration = "main@sha1:1", d.Generation
			d.Spec.HealthChecks = []meta.NamespacedObjectKindReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "smoke-test"}}
			conditions.MarkUnknown(d, gitopsv1alpha1.HealthyCondition, gitopsv1alpha1.HealthCheckPendingReason, "waiting for health check")
		}, want: statusHealthChecking, reason: "health checks not passed yet", outcome: outcomeWaiting,
			conditions: "Ready=Unknown/Progressing Reconciling=True/Progressing"},
		{name: "deleted, deletionPolicy Orphan", edit: deleted(gitopsv1alpha1.DeletionPolicyOrphan),
			want: statusOrphaning, reason: "deleted with deletionPolicy Orphan", outcome: outcomeDone, conditions: ""},
		{name: "deleted, OsmCluster gone, nothing recorded", edit: deleted(gitopsv1alpha1.DeletionPolicyDelete), noCluster: true,
			want: statusDeleted, reason: "OsmCluster osm not found, no NS instance recorded", outcome: outcomeDone, conditions: ""},
		{name: "deleted, OsmCluster gone, instances recorded", noCluster: true, edit: func(d *gitopsv1alpha1.OsmDeployment) {
			deleted(gitopsv1alpha1.DeletionPolicyDelete)(d)
			d.Status.Inventory = recorded
		}, want: statusDeletionBlocked, reason: "OsmCluster osm not found", outcome: outcomeDone, conditions: ""},
		{name: "deleted, terminations OSM does not answer about", osm: readOnlyOSM{err: errors.New("connection refused")},
			edit: func(d *gitopsv1alpha1.OsmDeployment) {
				deleted(gitopsv1alpha1.DeletionPolicyDelete)(d)
				d.Status.Inventory, d.Status.Operations = recorded, operation
			}, want: statusDeletionBlocked, reason: "checking OSM operations: connection refused", outcome: outcomeRetryable, conditions: "Ready=False/DeletionFailed Reconciling=True/DeletionFailed"},
		{name: "deleted, a termination OSM runs", osm: readOnlyOSM{unfinished: processing}, edit: func(d *gitopsv1alpha1.OsmDeployment) {
			deleted(gitopsv1alpha1.DeletionPolicyDelete)(d)
			d.Status.Inventory, d.Status.Operations = recorded, operation
		}, want: statusDeletionOperations, reason: "1 OSM operation(s) run, 0 ended", outcome: outcomeNext, conditions: ""},
		{name: "deleted, an owned instance OSM runs", osm: readOnlyOSM{instances: []osm.NSInstance{owned}}, followed: true,
			edit: func(d *gitopsv1alpha1.OsmDeployment) {
				deleted(gitopsv1alpha1.DeletionPolicyDelete)(d)
				d.Status.Inventory = recorded
			}, want: statusTerminating, reason: "OSM runs 1 NS instance(s) of it, 1 to terminate", outcome: outcomeWaiting, conditions: "Ready=False/DeletionFailed Reconciling=True/DeletionFailed"},
		{name: "deleted, OSM runs nothing of it", edit: func(d *gitopsv1alpha1.OsmDeployment) {
			deleted(gitopsv1alpha1.DeletionPolicyDelete)(d)
			d.Status.Inventory = recorded
		}, want: statusDeleted, reason: "OSM runs no NS instance of it", outcome: outcomeDone, conditions: ""},
	}
}

// machine is one machineCase set up: the reconciler, over a fake API server holding the
// OsmDeployment (and its OsmCluster unless noCluster), what determineState is given, and OSM.
type machine struct {
	r      *OsmDeploymentReconciler
	obj    *gitopsv1alpha1.OsmDeployment
	in     given
	nbi    *readOnlyOSM
	events *eventLog
	api    client.Client
}

func (tt machineCase) setUp() *machine {
	cluster := &gitopsv1alpha1.OsmCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant", Name: "osm", Generation: 1},
		Status: gitopsv1alpha1.OsmClusterStatus{OSMIdentity: machineIdentity, Conditions: []metav1.Condition{{Type: meta.ReadyCondition,
			Status: metav1.ConditionTrue, Reason: "Ready", ObservedGeneration: 1, LastTransitionTime: metav1.Now()}}}}
	obj := &gitopsv1alpha1.OsmDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant", Name: "ldap", Generation: 1},
		Spec: gitopsv1alpha1.OsmDeploymentSpec{ClusterRef: meta.LocalObjectReference{Name: "osm"}}}
	if tt.edit != nil {
		tt.edit(obj)
	}
	b := fake.NewClientBuilder().WithScheme(testenv.NewScheme()).WithStatusSubresource(&gitopsv1alpha1.OsmDeployment{}).
		WithIndex(&coordinationv1.Lease{}, nameclaims.HolderIndex, nameclaims.HolderUID) // as SetupIndexes
	if !tt.noCluster {
		b = b.WithObjects(cluster)
	}
	c := b.Build()
	events := newEventLog()
	r := &OsmDeploymentReconciler{Client: c, APIReader: c, EventRecorder: events, ClaimsNamespace: "osmops-system",
		OwnerIdentity: machineOwner, OperationPollInterval: time.Second}
	rev := tt.rev
	if rev == nil {
		rev = &gitops.Revision{}
	}
	// The revision the preconditions loaded, as the revision cache holds it for the apply.
	key := revisionKey{digest: "sha256:1"}
	r.revisions.entries = map[revisionKey]*revisionEntry{key: {revision: rev}}
	r.revisions.pins = map[types.NamespacedName]revisionKey{client.ObjectKeyFromObject(obj): key}
	nbi := tt.osm
	m := &machine{r: r, obj: obj, nbi: &nbi, events: events, api: c,
		in: given{revision: "main@sha1:1", rev: rev, operationsFollowed: tt.followed}}
	if !tt.noCluster || obj.DeletionTimestamp.IsZero() {
		// The connection the preconditions found, or a deletion's, taken earlier in the
		// reconcile; a deletion without it looks for the OsmCluster.
		m.in.conn = &osmconn.Connection{NBI: m.nbi, Parallelism: 1}
	}
	return m
}

// TestDetermineStateOnlyReads runs determineState over each state it can find: the state and
// its reason follow from the inputs, and the OsmDeployment, the events and OSM are left as
// they were.
func TestDetermineStateOnlyReads(t *testing.T) {
	for _, tt := range machineCases() {
		t.Run(tt.name, func(t *testing.T) {
			m := tt.setUp()
			before := m.obj.DeepCopy()

			st := m.r.determineState(context.Background(), m.obj, m.in)

			if st.status != tt.want {
				t.Errorf("state %s (%s), want %s", st.status, st.reason, tt.want)
			}
			if tt.reason != "" && st.reason != tt.reason {
				t.Errorf("reason %q, want %q", st.reason, tt.reason)
			}
			if !equality.Semantic.DeepEqual(before, m.obj) {
				t.Errorf("determineState changed the OsmDeployment:\nbefore %+v\nafter  %+v", before, m.obj)
			}
			if got := m.events.all(); len(got) > 0 {
				t.Errorf("determineState emitted events: %+v", got)
			}
			if m.nbi.mutations > 0 {
				t.Errorf("determineState sent %d request(s) that change OSM", m.nbi.mutations)
			}
		})
	}
}

// TestTheMachineActsOnEachState: each state determineState finds -> the action actForState
// chooses for it -> the outcome it ends the step with and the conditions the reconcile then
// writes (summarize, as the deferred status write does), against the read-only OSM, which
// refuses every change (helm-controller's TestAtomicRelease_actionForState). An outcome of
// next (the operations followed) is not run on: runMachine determines the state again.
func TestTheMachineActsOnEachState(t *testing.T) {
	found := map[deploymentStatus]bool{}
	for _, tt := range machineCases() {
		found[tt.want] = true
		t.Run(tt.name, func(t *testing.T) {
			m := tt.setUp()
			if err := m.api.Create(context.Background(), m.obj.DeepCopy()); err != nil {
				t.Fatal(err)
			}
			st := m.r.determineState(context.Background(), m.obj, m.in)

			out := m.r.actForState(context.Background(), m.obj, newSerialPatcher(m.obj, m.api), st)
			summarize(m.obj)

			if out.kind != tt.outcome {
				t.Errorf("state %s: outcome kind %d (%+v), want %d", st.status, out.kind, out, tt.outcome)
			}
			if got := conditionsOf(m.obj); got != tt.conditions {
				t.Errorf("state %s: conditions\n  %s\nwant\n  %s", st.status, got, tt.conditions)
			}
		})
	}
	for state := range statusCount {
		if !found[state] {
			t.Errorf("no case of state %s: the table must reach every state", state)
		}
	}
}

// conditionsOf says Ready, Reconciling and Stalled as "Type=Status/Reason", those set.
func conditionsOf(obj *gitopsv1alpha1.OsmDeployment) string {
	var out []string
	for _, kind := range []string{meta.ReadyCondition, meta.ReconcilingCondition, meta.StalledCondition} {
		if c := conditions.Get(obj, kind); c != nil {
			out = append(out, fmt.Sprintf("%s=%s/%s", kind, c.Status, c.Reason))
		}
	}
	return strings.Join(out, " ")
}

// TestOutcomeResults turns each kind of outcome into controller-runtime's result: every
// requeue goes through the jitter, an error goes to the work queue's back-off as it is, and each
// says its priority: a poll of operations OSM runs goes first, nothing else keeps it.
func TestOutcomeResults(t *testing.T) {
	double := func(d time.Duration) time.Duration { return 2 * d } // a jitter that shows it ran
	refused := errors.New("OSM refused")
	polling := waiting(5 * time.Second)
	polling.followsOperations = true
	tests := []struct {
		name     string
		outcome  outcome
		want     time.Duration
		priority int
		err      error
	}{
		{"done, no periodic look", done(0), 0, defaultPriority, nil},
		{"done, drift check after the interval", done(10 * time.Minute), 20 * time.Minute, defaultPriority, nil},
		{"waiting for a dependency", waiting(5 * time.Second), 10 * time.Second, defaultPriority, nil},
		{"polling operations OSM runs", polling, 10 * time.Second, operationsPriority, nil},
		{"stalling until the spec or revision changes", stalling(0), 0, defaultPriority, nil},
		{"stalling, OSM checked again", stalling(time.Minute), 2 * time.Minute, defaultPriority, nil},
		{"retryable", retrying(refused), 0, defaultPriority, refused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.outcome.result(double)
			if got.RequeueAfter != tt.want || got.Priority == nil || *got.Priority != tt.priority ||
				!errors.Is(err, tt.err) || (err == nil) != (tt.err == nil) {
				t.Errorf("result %+v (priority %v), %v; want requeue after %s, priority %d, %v", got, got.Priority, err, tt.want, tt.priority, tt.err)
			}
		})
	}
}

// TestOutcomeRequeuesAreJitteredWithinBounds draws many requeues of one interval through Flux's
// percentage jitter (seeded: deterministic): each stays within ±10% of the interval, and they
// differ, so OsmDeployments with one interval do not wake at once.
func TestOutcomeRequeuesAreJitteredWithinBounds(t *testing.T) {
	const interval = 10 * time.Minute
	jitterFn := jitter.Percent(0.1, rand.New(rand.NewSource(1)))
	seen := map[time.Duration]bool{}
	for _, o := range []outcome{done(interval), waiting(interval), stalling(interval)} {
		for range 100 {
			res, err := o.result(jitterFn)
			if err != nil || res.RequeueAfter < interval*9/10 || res.RequeueAfter > interval*11/10 {
				t.Fatalf("requeue %s, %v: want %s ±10%%", res.RequeueAfter, err, interval)
			}
			seen[res.RequeueAfter] = true
		}
	}
	if len(seen) < 2 {
		t.Errorf("every requeue after %s: not jittered", interval)
	}
}

// TestADeletionIsStatesOfTheSameMachine: the terminate of the last instance completed; one
// reconcile of the deletion follows it (DeletionOperations), determines the state again without
// asking OSM about operations twice, finds nothing left (Deleted) and lets the OsmDeployment go.
func TestADeletionIsStatesOfTheSameMachine(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(testenv.NewScheme()).Build()
	events := newEventLog()
	r := &OsmDeploymentReconciler{Client: c, APIReader: c, EventRecorder: events, ClaimsNamespace: "osmops-system",
		OwnerIdentity: "test-manager", OperationPollInterval: time.Second}
	obj := &gitopsv1alpha1.OsmDeployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "tenant", Name: "ldap", DeletionTimestamp: &metav1.Time{Time: time.Now()},
			Finalizers: []string{gitopsv1alpha1.OsmDeploymentFinalizer}},
		Spec: gitopsv1alpha1.OsmDeploymentSpec{ClusterRef: meta.LocalObjectReference{Name: "osm"}, Prune: true},
		Status: gitopsv1alpha1.OsmDeploymentStatus{
			Inventory: &gitopsv1alpha1.Inventory{NsInstances: []gitopsv1alpha1.NsInstanceEntry{
				{Name: "ldap", ID: "id-ldap", State: gitopsv1alpha1.NsInstanceDeleting}}},
			Operations: []gitopsv1alpha1.OperationEntry{{ID: "op-1", Type: osm.OperationTypeTerminate, NsInstance: "ldap",
				State: "PROCESSING", StartTime: metav1.Now()}},
		},
	}
	nbi := &readOnlyOSM{} // the terminate is no longer listed as unfinished: it completed, and the record went

	got := r.runMachine(context.Background(), obj, nil, given{conn: &osmconn.Connection{NBI: nbi, Parallelism: 1}})

	if got.kind != outcomeDone || got.after != 0 {
		t.Errorf("outcome %+v, want done without requeue", got)
	}
	if nbi.operationChecks != 1 {
		t.Errorf("operations checked %d times, want once", nbi.operationChecks)
	}
	if len(obj.Finalizers) != 0 || len(obj.Status.Operations) != 0 || len(obj.Status.Inventory.NsInstances) != 0 {
		t.Errorf("finalizers %v, operations %v, inventory %v: want the OsmDeployment let go with nothing left",
			obj.Finalizers, obj.Status.Operations, obj.Status.Inventory.NsInstances)
	}
	if nbi.mutations != 0 || len(events.all()) != 0 {
		t.Errorf("%d request(s) that change OSM, events %+v: want none", nbi.mutations, events.all())
	}
}
