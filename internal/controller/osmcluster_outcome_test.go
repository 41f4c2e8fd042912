package controller

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/nbisim"
	"github.com/osmops/osmops/internal/osmconn"
	"github.com/osmops/osmops/internal/testing/osmtenant"
)

// TestOsmClusterOutcomes reconciles an OsmCluster in a fake API server, twice (a check, then
// a Secret poll with no check due): each concludes Ready with its reason, leaves neither
// Reconciling nor Stalled, and requeues at the Secret poll (shorter here than the interval and
// clusterRetryInterval) through the reconciler's jitter, which doubles it to show it ran.
func TestOsmClusterOutcomes(t *testing.T) {
	const secretPoll = 20 * time.Second
	sim := nbisim.New(nbisim.Config{Username: "operator", Password: testPassword, Project: "admin",
		VIMAccounts: []nbisim.VIMAccount{{Name: testVIMAccount}}})
	answering := httptest.NewServer(sim)
	t.Cleanup(answering.Close)
	silent := httptest.NewServer(nil)
	silent.Close() // refuses connections
	tests := []struct {
		name   string
		url    string
		secret bool
		ready  metav1.ConditionStatus
		reason string
	}{
		{"connected", answering.URL, true, metav1.ConditionTrue, gitopsv1alpha1.ConnectedReason},
		{"no credentials Secret", answering.URL, false, metav1.ConditionFalse, gitopsv1alpha1.SecretNotFoundReason},
		{"unreachable", silent.URL, true, metav1.ConditionFalse, gitopsv1alpha1.UnreachableReason},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cluster := osmtenant.Cluster("tenant", tt.url)
			objects := []client.Object{cluster}
			if tt.secret {
				objects = append(objects, osmtenant.CredentialsSecret("tenant", "operator", testPassword))
			}
			api := fake.NewClientBuilder().WithScheme(testScheme).WithObjects(objects...).
				WithStatusSubresource(&gitopsv1alpha1.OsmCluster{}).
				WithIndex(&gitopsv1alpha1.OsmDeployment{}, clusterRefIndex, func(o client.Object) []string {
					return []string{o.(*gitopsv1alpha1.OsmDeployment).Spec.ClusterRef.Name}
				}).Build()
			r := &OsmClusterReconciler{Client: api, EventRecorder: record.NewFakeRecorder(10),
				Connections:        &osmconn.Pool{Reader: api, MaxRequestTimeout: time.Second, SecretMaxAge: time.Hour},
				SecretPollInterval: secretPoll, Jitter: func(d time.Duration) time.Duration { return 2 * d }}
			key := client.ObjectKeyFromObject(cluster)
			for _, step := range []string{"check", "Secret poll"} {
				res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key})
				got := &gitopsv1alpha1.OsmCluster{}
				if getErr := api.Get(context.Background(), key, got); err != nil || getErr != nil {
					t.Fatalf("%s: %v, %v", step, err, getErr)
				}
				if res.RequeueAfter != 2*secretPoll {
					t.Errorf("%s: requeue after %s, want %s jittered (%s)", step, res.RequeueAfter, secretPoll, 2*secretPoll)
				}
				if ready := conditions.Get(got, meta.ReadyCondition); ready == nil || ready.Status != tt.ready || ready.Reason != tt.reason {
					t.Errorf("%s: Ready %+v, want %s %s", step, ready, tt.ready, tt.reason)
				}
				if conditions.Has(got, meta.ReconcilingCondition) || conditions.Has(got, meta.StalledCondition) {
					t.Errorf("%s: conditions %+v, want neither Reconciling nor Stalled", step, got.Status.Conditions)
				}
			}
		})
	}
}
