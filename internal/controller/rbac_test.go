package controller

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	uzap "go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/yaml"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/osm"
	"github.com/osmops/osmops/internal/testing/testenv"
)

// Security: what the operator may do in the cluster (its RBAC roles, under which the suite's
// manager runs) and in its container; whom it trusts (TLS); whose objects it reads (its own
// namespace's); and what it never tells (the OSM password, in logs, events, status, metrics
// and errors).

// operatorUser is the identity of config/default's ServiceAccount, which the suite's manager
// impersonates.
const (
	operatorNamespace = "osmops-system"
	operatorUser      = "system:serviceaccount:" + operatorNamespace + ":osmops-controller-manager"
)

// readManifest decodes the YAML file at path, relative to the repository root, into out.
func readManifest(path string, out any) error {
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), path))
	if err != nil {
		return err
	}
	return yaml.UnmarshalStrict(data, out)
}

// asOperator binds the manager's generated ClusterRole (config/rbac/role.yaml), and its Role in
// its namespace (config/rbac/leader_election_role.yaml: leader election and the claims of NS
// instance names), to the operator's ServiceAccount and returns cfg impersonating it: the suite's reconcilers then have the
// permissions a deployed operator has, and no more, so that every test also checks that the
// role is enough.
func asOperator(ctx context.Context, cfg *rest.Config) (*rest.Config, error) {
	admin, err := client.New(cfg, client.Options{Scheme: testScheme})
	if err != nil {
		return nil, err
	}
	role := &rbacv1.ClusterRole{}
	if err := readManifest("config/rbac/role.yaml", role); err != nil {
		return nil, err
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: operatorUser}},
	}
	namespaceRole := &rbacv1.Role{}
	if err := readManifest("config/rbac/leader_election_role.yaml", namespaceRole); err != nil {
		return nil, err
	}
	namespaceRole.Namespace = operatorNamespace
	namespaceBinding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: namespaceRole.Name, Namespace: operatorNamespace},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: namespaceRole.Name},
		Subjects:   binding.Subjects,
	}
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNamespace}}
	for _, obj := range []client.Object{role, binding, namespace, namespaceRole, namespaceBinding} {
		if err := admin.Create(ctx, obj); err != nil {
			return nil, fmt.Errorf("installing %s: %w", obj.GetName(), err)
		}
	}
	operator := rest.CopyConfig(cfg)
	operator.Impersonate = rest.ImpersonationConfig{UserName: operatorUser,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + operatorNamespace, "system:authenticated"}}
	return operator, nil
}

var _ = Describe("RBAC and secrets", func() {
	It("manager role is the least that works", func() {
		t := GinkgoTB()
		role := &rbacv1.ClusterRole{}
		if err := readManifest("config/rbac/role.yaml", role); err != nil {
			t.Fatal(err)
		}
		// What the reconcilers call, and nothing else: they change their objects and statuses by
		// patches only; they read Secrets and ConfigMaps one by one, and list and watch only the
		// metadata of the labelled ones (values.go says why RBAC cannot say so); a namespace only
		// to tell whether it is being deleted (and kube-system's UID, the default owner identity);
		// they delete nothing.
		want := []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps", "secrets"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
			{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get"}},
			{APIGroups: []string{gitopsv1alpha1.GroupVersion.Group}, Resources: []string{"osmclusters", "osmdeployments"},
				Verbs: []string{"get", "list", "patch", "watch"}},
			{APIGroups: []string{gitopsv1alpha1.GroupVersion.Group}, Resources: []string{"osmclusters/status", "osmdeployments/status"},
				Verbs: []string{"patch"}},
			{APIGroups: []string{"source.toolkit.fluxcd.io"}, Resources: []string{"buckets", "gitrepositories", "ocirepositories"}, Verbs: []string{"get", "list", "watch"}},
		}
		if diff := cmp.Diff(want, role.Rules); diff != "" {
			t.Errorf("rules of %s (-want +got):\n%s", role.Name, diff)
		}
	})

	It("leader election role is enough", func() {
		t := GinkgoTB()
		g := NewWithT(t)
		ctx, cancel := context.WithTimeout(context.Background(), eventuallyTimeout)
		defer cancel()
		role := &rbacv1.Role{}
		g.Expect(readManifest("config/rbac/leader_election_role.yaml", role)).To(Succeed())
		g.Expect(role.Rules).To(Equal([]rbacv1.PolicyRule{
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "list", "watch", "create", "update", "delete"}},
			{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
		}), "the leader election role")

		// Install the Role in a namespace of its own, bound to a user of its own, and win an
		// election as that user, then give the lease up, as the manager does.
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "leader-election-"}}
		g.Expect(k8sClient.Create(ctx, ns)).To(Succeed())
		user := "system:serviceaccount:" + ns.Name + ":elector"
		role.Namespace = ns.Name
		binding := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: role.Name, Namespace: ns.Name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
		}
		g.Expect(k8sClient.Create(ctx, role)).To(Succeed())
		g.Expect(k8sClient.Create(ctx, binding)).To(Succeed())
		cfg := rest.CopyConfig(testRESTConfig)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
		clientset, err := kubernetes.NewForConfig(cfg)
		g.Expect(err).NotTo(HaveOccurred())

		lock := &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: ns.Name, Name: "osmops-leader-election"},
			Client:     clientset.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: "test"},
		}
		electionCtx, stop := context.WithCancel(ctx)
		led, done := make(chan struct{}), make(chan struct{})
		elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			// A renewal under way when the election is given up makes the release fail with a
			// conflict: renewals come seconds apart, and the test gives up as soon as it leads.
			Lock: lock, LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 5 * time.Second,
			ReleaseOnCancel: true,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(context.Context) { close(led) },
				OnStoppedLeading: func() {},
			},
		})
		g.Expect(err).NotTo(HaveOccurred())
		go func() {
			defer close(done)
			elector.Run(electionCtx)
		}()
		// Polled: the elector runs in its own goroutine.
		g.Eventually(led, eventuallyTimeout, eventuallyPollInterval).Should(BeClosed(), "the election was not won")
		stop()
		g.Eventually(done, eventuallyTimeout, eventuallyPollInterval).Should(BeClosed())
		lease, err := clientset.CoordinationV1().Leases(ns.Name).Get(ctx, lock.LeaseMeta.Name, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(lease.Spec.HolderIdentity).To(Or(BeNil(), HaveValue(BeEmpty())), "the lease was not released")
	})

	It("manager container is locked down", func() {
		t := GinkgoTB()
		g := NewWithT(t)
		data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config/manager/manager.yaml"))
		g.Expect(err).NotTo(HaveOccurred())
		var deployment *appsv1.Deployment
		decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			var doc appsv1.Deployment
			err := decoder.Decode(&doc)
			if errors.Is(err, io.EOF) {
				break
			}
			g.Expect(err).NotTo(HaveOccurred())
			if doc.Kind == "Deployment" {
				deployment = &doc
			}
		}
		g.Expect(deployment).NotTo(BeNil(), "no Deployment in manager.yaml")
		pod := deployment.Spec.Template.Spec
		g.Expect(pod.SecurityContext).NotTo(BeNil())
		g.Expect(pod.SecurityContext.RunAsNonRoot).To(HaveValue(BeTrue()), "pod runAsNonRoot")
		g.Expect(pod.SecurityContext.SeccompProfile).To(HaveValue(HaveField("Type", corev1.SeccompProfileTypeRuntimeDefault)))
		g.Expect(pod.HostNetwork || pod.HostPID || pod.HostIPC).To(BeFalse(), "host namespaces")
		for _, v := range pod.Volumes {
			g.Expect(v.HostPath).To(BeNil(), "volume %s is a hostPath", v.Name)
		}
		g.Expect(pod.Containers).To(HaveLen(1))
		for _, c := range append(pod.InitContainers, pod.Containers...) {
			sc := c.SecurityContext
			g.Expect(sc).NotTo(BeNil(), "container %s has no securityContext", c.Name)
			g.Expect(sc.Privileged).To(Or(BeNil(), HaveValue(BeFalse())), "container %s privileged", c.Name)
			g.Expect(sc.AllowPrivilegeEscalation).To(HaveValue(BeFalse()), "container %s allowPrivilegeEscalation", c.Name)
			g.Expect(sc.ReadOnlyRootFilesystem).To(HaveValue(BeTrue()), "container %s readOnlyRootFilesystem", c.Name)
			g.Expect(sc.RunAsNonRoot).To(HaveValue(BeTrue()), "container %s runAsNonRoot", c.Name)
			g.Expect(sc.Capabilities).NotTo(BeNil(), "container %s capabilities", c.Name)
			g.Expect(sc.Capabilities.Drop).To(ConsistOf(corev1.Capability("ALL")), "container %s drops", c.Name)
			g.Expect(sc.Capabilities.Add).To(BeEmpty(), "container %s adds capabilities", c.Name)
		}

		// The image: its final stage is distroless and non-root, with a numeric user (which
		// runAsNonRoot can check without an /etc/passwd).
		from, user := dockerfileFinalStage(t)
		g.Expect(from).To(MatchRegexp(`^gcr\.io/distroless/[a-z0-9-]+:nonroot$`), "final stage")
		g.Expect(user).To(MatchRegexp(`^[1-9][0-9]*(:[1-9][0-9]*)?$`), "USER of the final stage")
	})

	It("cluster trusts its CA bundle", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		tlsNBI := httptest.NewTLSServer(tn.sim)
		t.Cleanup(tlsNBI.Close)
		caSecret := func(name string, ca []byte) {
			tn.g.Expect(k8sClient.Create(tn.ctx, &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tn.namespace},
				Data:       map[string][]byte{gitopsv1alpha1.CASecretKey: ca},
			})).To(Succeed())
		}
		withCA := func(name string) func(*gitopsv1alpha1.OsmCluster) {
			return func(c *gitopsv1alpha1.OsmCluster) { c.Spec.CASecretRef = &meta.LocalObjectReference{Name: name} }
		}

		caSecret("nbi-ca", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsNBI.Certificate().Raw}))
		trusted := tn.newCluster("trusted", tlsNBI.URL, "osm-credentials", withCA("nbi-ca"))
		tn.clusterReason(trusted, metav1.ConditionTrue, gitopsv1alpha1.ConnectedReason)
		d := tn.deployment("over-tls", "gitops", func(d *gitopsv1alpha1.OsmDeployment) { d.Spec.ClusterRef.Name = "trusted" })
		tn.eventuallyApplied(d, tn.publish("gitops", demoRepo("1", "ldap")))

		caSecret("other-ca", anotherCA(t))
		tn.clusterReason(tn.newCluster("other-ca", tlsNBI.URL, "osm-credentials", withCA("other-ca")),
			metav1.ConditionFalse, gitopsv1alpha1.TLSErrorReason)
		caSecret("not-pem", []byte("not a certificate"))
		tn.g.Expect(tn.clusterReason(tn.newCluster("not-pem", tlsNBI.URL, "osm-credentials", withCA("not-pem")),
			metav1.ConditionFalse, gitopsv1alpha1.InvalidCASecretReason)).To(Equal("WithCABundle: the bundle holds no PEM certificate"))

		insecure := tn.newCluster("insecure", tlsNBI.URL, "osm-credentials", func(c *gitopsv1alpha1.OsmCluster) {
			c.Spec.InsecureSkipTLSVerify = true
		})
		tn.clusterReason(insecure, metav1.ConditionTrue, gitopsv1alpha1.ConnectedReason)
		tn.g.Expect(recorder.of(tn.namespace, "insecure")).To(ContainElement(recordedEvent{
			Namespace: tn.namespace, Name: "insecure", Type: corev1.EventTypeWarning, Reason: gitopsv1alpha1.InsecureTLSReason,
			Message: "TLS verification of " + tlsNBI.URL + " is off (insecureSkipTLSVerify): use caSecretRef outside labs",
		}))
	})

	It("tenants see only their own objects", func() {
		t := GinkgoTB()
		owner, other := newTenant(t), newTenant(t)
		owner.newCluster("only-here", owner.nbi.URL, "osm-credentials")
		owner.g.Expect(k8sClient.Create(owner.ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "ca-only-here", Namespace: owner.namespace},
			Data:       map[string][]byte{gitopsv1alpha1.CASecretKey: []byte("x")},
		})).To(Succeed())

		// The names exist, but in the owner's namespace only.
		d := other.deployment("borrower", "gitops", func(d *gitopsv1alpha1.OsmDeployment) { d.Spec.ClusterRef.Name = "only-here" })
		other.eventuallyCondition(d, meta.ReadyCondition, Equal("False "+gitopsv1alpha1.ClusterNotReadyReason+": waiting for OsmCluster only-here: not found"))
		credentials := other.newCluster("borrowed-credentials", other.nbi.URL, "osm-credentials-only-here")
		owner.g.Expect(k8sClient.Create(owner.ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "osm-credentials-only-here", Namespace: owner.namespace},
			StringData: map[string]string{"username": "operator", "password": testPassword},
		})).To(Succeed())
		other.g.Expect(other.clusterReason(credentials, metav1.ConditionFalse, gitopsv1alpha1.SecretNotFoundReason)).
			To(Equal("Secret " + other.namespace + "/osm-credentials-only-here not found"))
		ca := other.newCluster("borrowed-ca", strings.Replace(other.nbi.URL, "http:", "https:", 1), "osm-credentials", func(c *gitopsv1alpha1.OsmCluster) {
			c.Spec.CASecretRef = &meta.LocalObjectReference{Name: "ca-only-here"}
		})
		other.g.Expect(other.clusterReason(ca, metav1.ConditionFalse, gitopsv1alpha1.SecretNotFoundReason)).
			To(Equal("Secret " + other.namespace + "/ca-only-here not found"))
		// A dependency in another namespace is refused, as a source there is.
		dependent := other.deployment("dependent", "gitops", func(d *gitopsv1alpha1.OsmDeployment) {
			d.Spec.DependsOn = []gitopsv1alpha1.DependencyReference{{Namespace: owner.namespace, Name: "anything"}}
		})
		other.eventuallyCondition(dependent, meta.StalledCondition, Equal("True "+gitopsv1alpha1.AccessDeniedReason+": dependency "+
			owner.namespace+"/anything is in another namespace, which --no-cross-namespace-refs forbids"))
		other.g.Expect(other.mutatingRequests() + owner.mutatingRequests()).To(BeZero())
	})

	Context("client errors never hold secrets", func() {
		tests := []struct {
			name   string
			status int
			body   string
		}{
			{"error detail", http.StatusBadRequest, `{"code": "BAD_REQUEST", "status": 400, "detail": "bad password PASSWORD for token TOKEN"}`},
			{"error body not JSON", http.StatusInternalServerError, "Traceback: login(password=PASSWORD, token=TOKEN)"},
			{"answer not JSON", http.StatusOK, "password=PASSWORD token=TOKEN"},
			{"string where a number goes", http.StatusOK, `[{"_id": "x", "name": "ldap", "create-time": "PASSWORD TOKEN"}]`},
			{"wrong type", http.StatusOK, `{"PASSWORD": "TOKEN"}`},
		}
		for _, tc := range tests {
			It(tc.name, func() {
				t := GinkgoTB()
				nbi := httptest.NewServer(secretEchoingNBI(tc.status, tc.body))
				t.Cleanup(nbi.Close)
				c, err := osm.NewClient(nbi.URL, osm.Credentials{Username: "operator", Password: testPassword, Project: "admin"})
				if err != nil {
					t.Fatal(err)
				}
				_, err = c.ListNSInstances(t.Context())
				if err == nil {
					t.Fatal("the call succeeded")
				}
				for _, secret := range []string{testPassword, echoedToken} {
					if strings.Contains(err.Error(), secret) || strings.Contains(fmt.Sprintf("%+v %#v", err, err), secret) {
						t.Errorf("the error shows a secret: %v", err)
					}
				}
			})
		}
	})
})

// dockerfileFinalStage returns the image of the Dockerfile's last FROM and the USER that
// follows it.
func dockerfileFinalStage(t testing.TB) (from, user string) {
	file, err := os.Open(filepath.Join(testenv.RepoRoot(), "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	lines := bufio.NewScanner(file)
	for lines.Scan() {
		fields := strings.Fields(lines.Text())
		switch {
		case len(fields) < 2:
		case strings.EqualFold(fields[0], "FROM"):
			from, user = fields[1], ""
		case strings.EqualFold(fields[0], "USER"):
			user = fields[1]
		}
	}
	if err := lines.Err(); err != nil {
		t.Fatal(err)
	}
	return from, user
}

// anotherCA returns the PEM certificate of a CA of its own, which signed no NBI's certificate
// (every httptest TLS server has the same one).
func anotherCA(t testing.TB) []byte {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "another CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// secretEchoingNBI is an NBI that logs in anyone, then answers every other request with
// what it knows of the client's secrets (the password of the token request, the token of the
// Authorization header) put where a client may quote them: an error's detail, a body that is
// not JSON, and a number that is not one.
func secretEchoingNBI(status int, body string) http.HandlerFunc {
	var mu sync.Mutex
	var password string
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/osm/admin/v1/tokens" {
			var login struct{ Password string }
			_ = json.NewDecoder(r.Body).Decode(&login)
			mu.Lock()
			password = login.Password
			mu.Unlock()
			_, _ = fmt.Fprintf(w, `{"id": %q, "expires": 4102444800, "issued_at": 1}`, echoedToken)
			return
		}
		mu.Lock()
		secrets := strings.NewReplacer("PASSWORD", password, "TOKEN", strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
		mu.Unlock()
		w.WriteHeader(status)
		_, _ = w.Write([]byte(secrets.Replace(body)))
	}
}

// echoedToken is the token secretEchoingNBI gives out.
const echoedToken = "tok-0f1e2d3c4b5a69788796a5b4c3d2e1f0"

// suiteLog keeps every line the suite's manager logs, down to V(4).
var suiteLog lockedBuffer

// lockedBuffer is a bytes.Buffer safe for the manager's goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// captureLog tees the suite's logger into suiteLog down to V(4), whatever the level of the logs
// shown on stderr. Not V(5): there controller-runtime's priority queue logs its items while
// other goroutines change them, a data race under -race.
func captureLog() uzap.Option {
	return uzap.WrapCore(func(core zapcore.Core) zapcore.Core {
		return zapcore.NewTee(core, zapcore.NewCore(zapcore.NewJSONEncoder(uzap.NewProductionEncoderConfig()),
			zapcore.AddSync(&suiteLog), zapcore.Level(-4)))
	})
}

// checkSuiteKeptSecrets runs after the whole suite: the manager never logged the tenants'
// password, nor put it in an event, a status or a metric; and no reconcile panicked.
func checkSuiteKeptSecrets(ctx context.Context) error {
	sources := map[string]string{"the manager's log": suiteLog.String()}
	var events strings.Builder
	for _, e := range recorder.all() {
		fmt.Fprintln(&events, e)
	}
	sources["the events"] = events.String()
	for name, list := range map[string]client.ObjectList{
		"OsmDeployments": &gitopsv1alpha1.OsmDeploymentList{}, "OsmClusters": &gitopsv1alpha1.OsmClusterList{}, "Events": &corev1.EventList{},
	} {
		if err := k8sClient.List(ctx, list); err != nil {
			return err
		}
		data, err := json.Marshal(list)
		if err != nil {
			return err
		}
		sources[name] = string(data)
	}
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		return err
	}
	var metrics strings.Builder
	panics := 0.0
	for _, f := range families {
		fmt.Fprintln(&metrics, f.String())
		if f.GetName() == "controller_runtime_reconcile_panics_total" {
			for _, m := range f.Metric {
				panics += m.GetCounter().GetValue()
			}
		}
	}
	sources["the metrics"] = metrics.String()
	var problems []string
	for name, text := range sources {
		if strings.Contains(text, testPassword) {
			problems = append(problems, name+" shows the password")
		}
		if strings.Contains(text, testValuesSecret) || strings.Contains(text, testValuesLeaf) {
			problems = append(problems, name+" shows a value from a Secret")
		}
	}
	if panics > 0 {
		problems = append(problems, fmt.Sprintf("%v reconcile(s) panicked", panics))
	}
	if len(sources["the manager's log"]) == 0 {
		problems = append(problems, "the manager's log was not captured")
	}
	if len(problems) > 0 {
		return errors.New("security check of the suite: " + strings.Join(problems, "; "))
	}
	return nil
}
