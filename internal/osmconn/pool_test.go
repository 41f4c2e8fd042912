package osmconn

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/osm"
	"github.com/osmops/osmops/internal/testing/testenv"
)

// poolWorld is an OsmCluster, its namespace and credentials Secret in a fake API server, and a
// pool that reads them.
type poolWorld struct {
	g       *WithT
	ctx     context.Context
	api     client.Client
	cluster *gitopsv1alpha1.OsmCluster
	pool    *Pool
}

// testPassword is the OSM password of the tests' credentials Secret.
const testPassword = "s3cr3t-Pa55w0rd-osmops"

func newPoolWorld(t testing.TB) *poolWorld {
	cluster := &gitopsv1alpha1.OsmCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "osm", Namespace: "tenant"},
		Spec: gitopsv1alpha1.OsmClusterSpec{URL: "https://osm.example.com:9999",
			CredentialsSecretRef: meta.LocalObjectReference{Name: "osm-credentials"}},
	}
	api := fake.NewClientBuilder().WithScheme(testenv.NewScheme()).WithObjects(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "osm-credentials", Namespace: "tenant"},
			Data: map[string][]byte{"username": []byte("operator"), "password": []byte(testPassword)}},
		cluster.DeepCopy(),
	).Build()
	return &poolWorld{g: NewWithT(t), ctx: context.Background(), api: api, cluster: cluster,
		pool: &Pool{Reader: api, SecretMaxAge: time.Hour}}
}

func (w *poolWorld) get() *Connection {
	conn, err := w.pool.Get(w.ctx, w.cluster)
	w.g.Expect(err).NotTo(HaveOccurred())
	return conn
}

func (w *poolWorld) setPassword(password string) {
	secret := &corev1.Secret{}
	w.g.Expect(w.api.Get(w.ctx, client.ObjectKey{Namespace: "tenant", Name: "osm-credentials"}, secret)).To(Succeed())
	secret.Data["password"] = []byte(password)
	w.g.Expect(w.api.Update(w.ctx, secret)).To(Succeed())
}

func (w *poolWorld) deleteSecret() {
	w.g.Expect(w.api.Delete(w.ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "osm-credentials", Namespace: "tenant"}})).To(Succeed())
}

func TestPoolRebuildsOnlyWhatChanged(t *testing.T) {
	t.Parallel()
	w := newPoolWorld(t)
	first := w.get()
	w.g.Expect(w.get()).To(BeIdenticalTo(first), "nothing changed")

	// A new password is read at the next Refresh (the OsmCluster reconciler's poll), or once
	// the Secrets read are older than SecretMaxAge.
	w.setPassword("rotated-" + testPassword)
	w.g.Expect(w.get()).To(BeIdenticalTo(first), "the Secrets read are recent")
	rotated, err := w.pool.Refresh(w.ctx, w.cluster)
	w.g.Expect(err).NotTo(HaveOccurred())
	w.g.Expect(rotated).NotTo(BeIdenticalTo(first))
	w.g.Expect(w.get()).To(BeIdenticalTo(rotated))

	// A new spec is seen at once.
	w.cluster.Spec.MaxConcurrentRequests = 3
	resized := w.get()
	w.g.Expect(resized).NotTo(BeIdenticalTo(rotated))
	w.g.Expect(resized.Parallelism).To(Equal(3))

	w.pool.Evict(client.ObjectKeyFromObject(w.cluster))
	w.g.Expect(w.get()).NotTo(BeIdenticalTo(resized))
}

func TestPoolDropsTheClientOfARemovedSecret(t *testing.T) {
	t.Parallel()
	w := newPoolWorld(t)
	w.get()
	w.deleteSecret()
	_, err := w.pool.Refresh(w.ctx, w.cluster)
	w.g.Expect(err).To(Equal(&Error{Reason: gitopsv1alpha1.SecretNotFoundReason,
		Message: "Secret tenant/osm-credentials not found"}))
	// The OsmCluster is deleted next: the client is gone already.
	w.cluster.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	_, err = w.pool.Get(w.ctx, w.cluster)
	w.g.Expect(err).To(Equal(&Error{Reason: gitopsv1alpha1.SecretNotFoundReason,
		Message: "Secret tenant/osm-credentials not found", Gone: true}))
}

func TestPoolKeepsTheClientWhileTheOsmClusterIsDeleted(t *testing.T) {
	t.Parallel()
	w := newPoolWorld(t)
	first := w.get()
	w.deleteSecret()
	w.cluster.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	conn, err := w.pool.Refresh(w.ctx, w.cluster)
	w.g.Expect(err).NotTo(HaveOccurred())
	w.g.Expect(conn).To(BeIdenticalTo(first))
}

func TestPoolKeepsTheClientWhileItsNamespaceIsDeleted(t *testing.T) {
	t.Parallel()
	w := newPoolWorld(t)
	first := w.get()
	ns := &corev1.Namespace{}
	w.g.Expect(w.api.Get(w.ctx, client.ObjectKey{Name: "tenant"}, ns)).To(Succeed())
	ns.Finalizers = []string{"test.osmops.io/keep"}
	w.g.Expect(w.api.Update(w.ctx, ns)).To(Succeed())
	w.g.Expect(w.api.Delete(w.ctx, ns)).To(Succeed()) // Terminating: marked, kept by its finalizer
	w.deleteSecret()
	conn, err := w.pool.Refresh(w.ctx, w.cluster)
	w.g.Expect(err).NotTo(HaveOccurred())
	w.g.Expect(conn).To(BeIdenticalTo(first))
}

func TestPoolAfterARestartHasNoClientToKeep(t *testing.T) {
	t.Parallel()
	w := newPoolWorld(t)
	w.deleteSecret()
	w.cluster.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	_, err := w.pool.Get(w.ctx, w.cluster)
	w.g.Expect(err).To(HaveField("Gone", true))
}

func TestPoolNamesSecretsNotTheirContent(t *testing.T) {
	t.Parallel()
	w := newPoolWorld(t)
	secret := &corev1.Secret{}
	w.g.Expect(w.api.Get(w.ctx, client.ObjectKey{Namespace: "tenant", Name: "osm-credentials"}, secret)).To(Succeed())
	delete(secret.Data, "username")
	w.g.Expect(w.api.Update(w.ctx, secret)).To(Succeed())
	_, err := w.pool.Get(w.ctx, w.cluster)
	w.g.Expect(err).To(MatchError("Secret tenant/osm-credentials has no username"))
	w.g.Expect(strings.Contains(err.Error(), testPassword)).To(BeFalse())
}

func TestPoolRecordsRequestsByOsmCluster(t *testing.T) {
	t.Parallel()
	w := newPoolWorld(t)
	nbi := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		_, _ = rw.Write([]byte(`{"version": "15.0"}`))
	}))
	t.Cleanup(nbi.Close)
	w.cluster.Spec.URL = nbi.URL
	registry := prometheus.NewRegistry()
	w.pool.Metrics = osm.NewMetrics(registry)
	_, err := w.get().NBI.(*osm.Client).Version(w.ctx)
	w.g.Expect(err).NotTo(HaveOccurred())
	families, err := registry.Gather()
	w.g.Expect(err).NotTo(HaveOccurred())
	var requests []map[string]string
	for _, f := range families {
		if f.GetName() == "osmops_nbi_requests_total" {
			for _, m := range f.Metric {
				requests = append(requests, metricLabels(m))
			}
		}
	}
	w.g.Expect(requests).To(ConsistOf(HaveKeyWithValue("cluster", "tenant/osm")))
}

func metricLabels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.Label {
		out[l.GetName()] = l.GetValue()
	}
	return out
}
