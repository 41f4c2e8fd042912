package controller

import (
	"context"
	"errors"
	"math/rand"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/jitter"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// TestDetermineStateOnlyReads runs determineState over each state it can find: the state and
// its reason follow from the inputs, and the OsmDeployment, the events and OSM are left as
// they were.
func TestDetermineStateOnlyReads(t *testing.T) {
	const ns, name, identity = "tenant", "ldap", "osm-project-1"
	owner := engine.Owner{Manager: "test-manager", Namespace: ns, Name: name}
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

	tests := []struct {
		name string
		// edit sets the OsmDeployment up; osm is what OSM answers; rev is the revision (none
		// declared when nil); noCluster: its OsmCluster is gone; followed: the operations were
		// followed already in this reconcile.
		edit      func(*gitopsv1alpha1.OsmDeployment)
		osm       readOnlyOSM
		rev       *gitops.Revision
		noCluster bool
		followed  bool
		want      deploymentStatus
		reason    string
	}{
		{name: "suspended", edit: func(d *gitopsv1alpha1.OsmDeployment) { d.Spec.Suspend = true },
			want: statusSuspended, reason: "spec.suspend is set"},
		{name: "operations OSM does not answer about", edit: func(d *gitopsv1alpha1.OsmDeployment) { d.Status.Operations = operation },
			osm: readOnlyOSM{err: errors.New("connection refused")}, want: statusOperationsUnknown, reason: "checking OSM operations: connection refused"},
		{name: "an operation OSM still runs", edit: func(d *gitopsv1alpha1.OsmDeployment) { d.Status.Operations = operation },
			osm: readOnlyOSM{unfinished: processing}, want: statusOperationsRunning, reason: "1 OSM operation(s) run"},
		{name: "operations that ended", edit: func(d *gitopsv1alpha1.OsmDeployment) { d.Status.Operations = operation },
			want: statusOperationsEnded, reason: "1 OSM operation(s) ended"},
		{name: "the OsmCluster gone since the preconditions", noCluster: true, want: statusReadFailed,
			reason: `OsmCluster osm: osmclusters.gitops.osmops.io "osm" not found`},
		{name: "OSM cannot be read", rev: declaring, osm: readOnlyOSM{err: errors.New("connection refused")},
			want: statusOSMUnreadable, reason: "observing OSM: listing NS instances: connection refused"},
		{name: "a revision OSM lacks the NSD of", rev: declaring, want: statusInvalid},
		{name: "nothing declared, nothing run", want: statusInSync},
		{name: "an owned instance no longer declared, with prune", osm: readOnlyOSM{instances: []osm.NSInstance{owned}},
			edit: func(d *gitopsv1alpha1.OsmDeployment) { d.Spec.Prune, d.Status.Inventory = true, recorded },
			want: statusOutOfSync},
		{name: "deleted, deletionPolicy Orphan", edit: deleted(gitopsv1alpha1.DeletionPolicyOrphan),
			want: statusOrphaning, reason: "deleted with deletionPolicy Orphan"},
		{name: "deleted, OsmCluster gone, nothing recorded", edit: deleted(gitopsv1alpha1.DeletionPolicyDelete), noCluster: true,
			want: statusDeleted, reason: "OsmCluster osm not found, no NS instance recorded"},
		{name: "deleted, OsmCluster gone, instances recorded", noCluster: true, edit: func(d *gitopsv1alpha1.OsmDeployment) {
			deleted(gitopsv1alpha1.DeletionPolicyDelete)(d)
			d.Status.Inventory = recorded
		}, want: statusDeletionBlocked, reason: "OsmCluster osm not found"},
		{name: "deleted, terminations OSM does not answer about", osm: readOnlyOSM{err: errors.New("connection refused")},
			edit: func(d *gitopsv1alpha1.OsmDeployment) {
				deleted(gitopsv1alpha1.DeletionPolicyDelete)(d)
				d.Status.Inventory, d.Status.Operations = recorded, operation
			}, want: statusDeletionBlocked, reason: "checking OSM operations: connection refused"},
		{name: "deleted, a termination OSM runs", osm: readOnlyOSM{unfinished: processing}, edit: func(d *gitopsv1alpha1.OsmDeployment) {
			deleted(gitopsv1alpha1.DeletionPolicyDelete)(d)
			d.Status.Inventory, d.Status.Operations = recorded, operation
		}, want: statusDeletionOperations, reason: "1 OSM operation(s) run, 0 ended"},
		{name: "deleted, an owned instance OSM runs", osm: readOnlyOSM{instances: []osm.NSInstance{owned}}, followed: true,
			edit: func(d *gitopsv1alpha1.OsmDeployment) {
				deleted(gitopsv1alpha1.DeletionPolicyDelete)(d)
				d.Status.Inventory = recorded
			}, want: statusTerminating, reason: "OSM runs 1 NS instance(s) of it, 1 to terminate"},
		{name: "deleted, OSM runs nothing of it", edit: func(d *gitopsv1alpha1.OsmDeployment) {
			deleted(gitopsv1alpha1.DeletionPolicyDelete)(d)
			d.Status.Inventory = recorded
		}, want: statusDeleted, reason: "OSM runs no NS instance of it"},
	}
	scheme := testenv.NewScheme()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cluster := &gitopsv1alpha1.OsmCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "osm", Generation: 1},
				Status: gitopsv1alpha1.OsmClusterStatus{OSMIdentity: identity, Conditions: []metav1.Condition{{Type: meta.ReadyCondition,
					Status: metav1.ConditionTrue, Reason: "Ready", ObservedGeneration: 1, LastTransitionTime: metav1.Now()}}}}
			b := fake.NewClientBuilder().WithScheme(scheme).WithIndex(&coordinationv1.Lease{}, nameclaims.HolderIndex, nameclaims.HolderUID) // as SetupIndexes
			if !tt.noCluster {
				b = b.WithObjects(cluster)
			}
			c := b.Build()
			events := newEventLog()
			r := &OsmDeploymentReconciler{Client: c, APIReader: c, EventRecorder: events, ClaimsNamespace: "osmops-system",
				OwnerIdentity: owner.Manager, OperationPollInterval: time.Second}
			obj := &gitopsv1alpha1.OsmDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Generation: 1},
				Spec: gitopsv1alpha1.OsmDeploymentSpec{ClusterRef: meta.LocalObjectReference{Name: "osm"}}}
			if tt.edit != nil {
				tt.edit(obj)
			}
			rev := tt.rev
			if rev == nil {
				rev = &gitops.Revision{}
			}
			nbi := tt.osm
			in := given{revision: "main@sha1:1", rev: rev, operationsFollowed: tt.followed}
			if !tt.noCluster || obj.DeletionTimestamp.IsZero() {
				// The connection the preconditions found, or a deletion's, taken earlier in the
				// reconcile; a deletion without it looks for the OsmCluster.
				in.conn = &osmconn.Connection{NBI: &nbi, Parallelism: 1}
			}
			before := obj.DeepCopy()

			st := r.determineState(context.Background(), obj, in)

			if st.status != tt.want {
				t.Errorf("state %s (%s), want %s", st.status, st.reason, tt.want)
			}
			if tt.reason != "" && st.reason != tt.reason {
				t.Errorf("reason %q, want %q", st.reason, tt.reason)
			}
			if !equality.Semantic.DeepEqual(before, obj) {
				t.Errorf("determineState changed the OsmDeployment:\nbefore %+v\nafter  %+v", before, obj)
			}
			if got := events.all(); len(got) > 0 {
				t.Errorf("determineState emitted events: %+v", got)
			}
			if nbi.mutations > 0 {
				t.Errorf("determineState sent %d request(s) that change OSM", nbi.mutations)
			}
		})
	}
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
