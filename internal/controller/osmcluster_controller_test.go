package controller

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
)

// clusterReason waits until the OsmCluster's Ready condition has the reason, and returns its message.
// requestCheck asks for a health check of cluster, as a person does (a reconcile request), and
// waits until it ran.
func (tn *tenant) requestCheck(cluster *gitopsv1alpha1.OsmCluster, request string) {
	tn.t.Helper()
	tn.g.Eventually(func() error {
		got := &gitopsv1alpha1.OsmCluster{}
		if err := k8sClient.Get(tn.ctx, client.ObjectKeyFromObject(cluster), got); err != nil {
			return err
		}
		got.Annotations = map[string]string{meta.ReconcileRequestAnnotation: request}
		return k8sClient.Update(tn.ctx, got)
	}).Should(Succeed())
	tn.g.Eventually(func() string {
		got := &gitopsv1alpha1.OsmCluster{}
		_ = k8sClient.Get(tn.ctx, client.ObjectKeyFromObject(cluster), got)
		return got.Status.LastHandledReconcileAt
	}).Should(Equal(request))
}

func (tn *tenant) clusterReason(cluster *gitopsv1alpha1.OsmCluster, status metav1.ConditionStatus, reason string) string {
	tn.t.Helper()
	var message string
	tn.g.Eventually(func() string {
		got := &gitopsv1alpha1.OsmCluster{}
		if err := k8sClient.Get(tn.ctx, client.ObjectKeyFromObject(cluster), got); err != nil {
			return err.Error()
		}
		c := conditionOf(got.Status.Conditions, meta.ReadyCondition)
		if c == nil {
			return "no Ready condition"
		}
		message = c.Message
		return string(c.Status) + " " + c.Reason
	}).Should(Equal(string(status) + " " + reason))
	return message
}

func (tn *tenant) newCluster(name, url, secret string, edit ...func(*gitopsv1alpha1.OsmCluster)) *gitopsv1alpha1.OsmCluster {
	c := &gitopsv1alpha1.OsmCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tn.namespace, Labels: tn.labels()},
		Spec:       gitopsv1alpha1.OsmClusterSpec{URL: url, CredentialsSecretRef: meta.LocalObjectReference{Name: secret}},
	}
	for _, e := range edit {
		e(c)
	}
	tn.g.Expect(k8sClient.Create(tn.ctx, c)).To(Succeed())
	return c
}

var _ = Describe("The OsmCluster reconciler", func() {
	It("reports OSM's version and VIM accounts", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		got := tn.cluster
		tn.g.Expect(got.Status.OSMVersion).NotTo(BeEmpty())
		tn.g.Expect(got.Status.VIMAccounts).To(Equal([]string{"site1"}))
		tn.g.Expect(got.Status.LastCheckedAt).NotTo(BeNil())
	})

	It("explains the problems of its Secret", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		missing := tn.newCluster("missing", tn.nbi.URL, "no-such-secret")
		tn.g.Expect(tn.clusterReason(missing, metav1.ConditionFalse, gitopsv1alpha1.SecretNotFoundReason)).
			To(ContainSubstring("no-such-secret"))

		tn.g.Expect(k8sClient.Create(tn.ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "no-password", Namespace: tn.namespace},
			StringData: map[string]string{"username": "operator"},
		})).To(Succeed())
		noKey := tn.newCluster("no-key", tn.nbi.URL, "no-password")
		tn.g.Expect(tn.clusterReason(noKey, metav1.ConditionFalse, gitopsv1alpha1.SecretKeyMissingReason)).
			To(ContainSubstring("has no password"))
	})

	It("reports bad credentials and recovers on rotation", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "wrong", Namespace: tn.namespace},
			StringData: map[string]string{"username": "operator", "password": "not-the-password"},
		}
		tn.g.Expect(k8sClient.Create(tn.ctx, secret)).To(Succeed())
		cluster := tn.newCluster("wrong", tn.nbi.URL, "wrong")
		message := tn.clusterReason(cluster, metav1.ConditionFalse, gitopsv1alpha1.AuthenticationFailedReason)
		tn.g.Expect(message).NotTo(ContainSubstring("not-the-password"))

		// The fixed password is picked up without a watch (the operator may only get Secrets).
		secret.StringData = map[string]string{"username": "operator", "password": testPassword}
		tn.g.Expect(k8sClient.Update(tn.ctx, secret)).To(Succeed())
		tn.clusterReason(cluster, metav1.ConditionTrue, gitopsv1alpha1.ConnectedReason)
	})

	// OSM locks a user after 5 failed logins: after a refused login the OsmCluster logs in again
	// only when asked to, however often it is reconciled, even with a health check due at once.
	It("does not lock the OSM account", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		// Refused logins only: another test's OsmCluster may find this simulator at the port its
		// own had, and log in with the right password.
		logins := func() int64 {
			return countAnswered(tn.sim, http.MethodPost+" /osm/admin/v1/tokens", http.StatusUnauthorized)
		}
		before := logins()
		tn.g.Expect(k8sClient.Create(tn.ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "wrong", Namespace: tn.namespace},
			StringData: map[string]string{"username": "operator", "password": "not-the-password"},
		})).To(Succeed())
		cluster := tn.newCluster("wrong", tn.nbi.URL, "wrong", func(c *gitopsv1alpha1.OsmCluster) {
			c.Spec.Interval = &metav1.Duration{Duration: time.Millisecond}
		})
		tn.g.Expect(tn.clusterReason(cluster, metav1.ConditionFalse, gitopsv1alpha1.AuthenticationFailedReason)).
			To(ContainSubstring("will not log in again until"))

		// Each new user of the OsmCluster reconciles it once more; every health check is due.
		for i := 1; i <= 6; i++ {
			tn.deployment(fmt.Sprintf("user-%d", i), "gitops", func(d *gitopsv1alpha1.OsmDeployment) {
				d.Spec.ClusterRef.Name = cluster.Name
				d.Spec.Suspend = true
			})
			tn.g.Eventually(func() int32 {
				got := &gitopsv1alpha1.OsmCluster{}
				_ = k8sClient.Get(tn.ctx, client.ObjectKeyFromObject(cluster), got)
				return got.Status.Deployments
			}).Should(BeEquivalentTo(i))
		}
		tn.g.Expect(logins()-before).To(BeEquivalentTo(1), "logins after 6 more reconciles")
		tn.g.Expect(tn.sim.State().Users).To(ConsistOf(HaveField("Status", "active")), "OSM's account")

		// A reconcile request tries once more.
		tn.g.Eventually(func() error {
			got := &gitopsv1alpha1.OsmCluster{}
			if err := k8sClient.Get(tn.ctx, client.ObjectKeyFromObject(cluster), got); err != nil {
				return err
			}
			got.Annotations = map[string]string{meta.ReconcileRequestAnnotation: "retry"}
			return k8sClient.Update(tn.ctx, got)
		}).Should(Succeed())
		tn.g.Eventually(logins).Should(BeEquivalentTo(before + 2))
	})

	// A health check proves the credentials with the token it already has: each login costs OSM a
	// bcrypt hash and leaves one more live token, so N checks make one login while the token lasts.
	It("reuses the token across health checks", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		count := func(method, route string) int64 {
			var n int64
			for _, e := range tn.sim.Stats().Endpoints {
				if e.Method == method && e.Route == route && e.Status < http.StatusBadRequest {
					n += e.Requests
				}
			}
			return n
		}
		checksBefore := count(http.MethodGet, "/osm/admin/v1/vim_accounts")
		// Each reconcile request is a health check, due or not.
		const checks = 5
		for i := 1; i <= checks; i++ {
			tn.requestCheck(tn.cluster, fmt.Sprintf("check-%d", i))
		}
		tn.g.Eventually(func() int64 { return count(http.MethodGet, "/osm/admin/v1/vim_accounts") - checksBefore }).
			Should(BeNumerically(">=", checks), "health checks")
		tn.g.Expect(count(http.MethodPost, "/osm/admin/v1/tokens")).To(BeEquivalentTo(1),
			"logins for the first check and %d more", checks)
	})

	It("reports an unreachable NBI and TLS errors", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		// Port 1, where nothing listens (as retire does): the port of a closed server may be taken
		// meanwhile by the simulator of a test that runs in parallel.
		down := tn.newCluster("down", "http://127.0.0.1:1", "osm-credentials")
		tn.clusterReason(down, metav1.ConditionFalse, gitopsv1alpha1.UnreachableReason)

		tlsNBI := httptest.NewTLSServer(tn.sim)
		t.Cleanup(tlsNBI.Close)
		untrusted := tn.newCluster("untrusted", tlsNBI.URL, "osm-credentials")
		tn.clusterReason(untrusted, metav1.ConditionFalse, gitopsv1alpha1.TLSErrorReason)

		insecure := tn.newCluster("insecure", tlsNBI.URL, "osm-credentials", func(c *gitopsv1alpha1.OsmCluster) {
			c.Spec.InsecureSkipTLSVerify = true
		})
		tn.clusterReason(insecure, metav1.ConditionTrue, gitopsv1alpha1.ConnectedReason)
		tn.g.Expect(recorder.messagesOf(tn.namespace, "insecure")).To(ContainSubstring("TLS verification"))
	})

	It("counts its OsmDeployments and waits for them on deletion", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("ldap", "gitops", func(d *gitopsv1alpha1.OsmDeployment) { d.Spec.Suspend = true })
		tn.g.Eventually(func() int32 {
			got := &gitopsv1alpha1.OsmCluster{}
			_ = k8sClient.Get(tn.ctx, client.ObjectKeyFromObject(tn.cluster), got)
			return got.Status.Deployments
		}).Should(BeEquivalentTo(1))

		tn.g.Expect(k8sClient.Delete(tn.ctx, tn.cluster)).To(Succeed())
		tn.g.Expect(tn.clusterReason(tn.cluster, metav1.ConditionFalse, gitopsv1alpha1.InUseReason)).To(ContainSubstring("1 OsmDeployment"))
		tn.g.Expect(k8sClient.Delete(tn.ctx, d)).To(Succeed())
		tn.eventuallyGone(d)
		tn.eventuallyGone(tn.cluster)
	})

	// A tenant points six OsmClusters at another's OSM, as 127.0.0.1 and as localhost, with the
	// other's user name and a guessed password: OSM locks a user after 5 failed logins, osmops
	// sends 2, and says in the others' status whose failures hold their logins back.
	It("OsmClusters cannot lock an OSM user", func() {
		t := GinkgoTB()
		victim := newTenant(t)
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "tenant-"}}
		victim.g.Expect(k8sClient.Create(victim.ctx, ns)).To(Succeed())
		attacker := *victim
		attacker.namespace = ns.Name
		t.Cleanup(attacker.retire)
		victim.g.Expect(k8sClient.Create(victim.ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "guess", Namespace: ns.Name},
			StringData: map[string]string{"username": "operator", "password": "a-guess"},
		})).To(Succeed())
		urls := []string{victim.nbi.URL, strings.Replace(victim.nbi.URL, "127.0.0.1", "localhost", 1)}
		var clusters []*gitopsv1alpha1.OsmCluster
		for i := range 6 {
			clusters = append(clusters, attacker.newCluster(fmt.Sprint("guess-", i), urls[i%2], "guess"))
		}
		var heldBack string
		reasons := func() map[string]int {
			counts := map[string]int{}
			for _, c := range clusters {
				got := &gitopsv1alpha1.OsmCluster{}
				victim.g.Expect(k8sClient.Get(victim.ctx, client.ObjectKeyFromObject(c), got)).To(Succeed())
				if ready := conditionOf(got.Status.Conditions, meta.ReadyCondition); ready != nil {
					counts[ready.Reason]++
					if ready.Reason == gitopsv1alpha1.LoginHeldBackReason {
						heldBack = ready.Message
					}
				}
			}
			return counts
		}
		victim.g.Eventually(reasons).Should(Equal(map[string]int{
			gitopsv1alpha1.AuthenticationFailedReason: 2, gitopsv1alpha1.LoginHeldBackReason: 4}))
		user := victim.sim.State().Users[0]
		victim.g.Expect(user.Status).To(Equal("active"))
		victim.g.Expect(user.RetryCount).To(Equal(2))
		victim.g.Expect(heldBack).To(MatchRegexp(`2 login\(s\) of this user (at this URL|from this namespace) failed, by OsmCluster\(s\) ` +
			ns.Name + `/guess-\d, ` + ns.Name + `/guess-\d;`))
		victim.clusterReason(victim.cluster, metav1.ConditionTrue, gitopsv1alpha1.ConnectedReason)
	})
})
