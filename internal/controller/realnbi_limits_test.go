package controller

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/testing/osmtenant"
)

// realNBITarget is the real NBI the specs of this label run against; they are skipped without.
func realNBITarget(t testing.TB) string {
	target := os.Getenv(realNBIEnv)
	if target == "" {
		t.Skip(realNBIEnv + " is not set: see docs/fidelity.md")
	}
	return target
}

// realNBITenant makes a tenant whose OsmCluster "real" reaches the real NBI at target as user,
// through a request log, and whose OsmDeployment "demo" on it reads the demo repository (with
// the Secret its values need).
func realNBITenant(t testing.TB, target, user, password string) (*tenant, *requestLog, *gitopsv1alpha1.OsmCluster, *gitopsv1alpha1.OsmDeployment) {
	tn := newTenant(t)
	// The real LCM runs each operation in seconds, and the steps wait for several.
	tn.g.SetDefaultEventuallyTimeout(90 * time.Second)
	log := &requestLog{}
	nbi := log.proxy(t, target)
	tn.g.Expect(k8sClient.Create(tn.ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "real-credentials", Namespace: tn.namespace},
		StringData: map[string]string{"username": user, "password": password},
	})).To(Succeed())
	tn.g.Expect(k8sClient.Create(tn.ctx, osmtenant.ValuesSecret(tn.namespace, "ldap-admin", // the Secret of hack/demo-repo
		map[string]string{"password": testValuesSecret}))).To(Succeed())
	cluster := tn.newCluster("real", nbi.URL, "real-credentials")
	d := tn.deployment("demo", "demo", func(d *gitopsv1alpha1.OsmDeployment) { d.Spec.ClusterRef.Name = cluster.Name })
	return tn, log, cluster, d
}

// nbiAdmin sends requests to the real NBI as its admin, to set it up as an OSM administrator
// would (quotas, users) and to check what the operator did.
type nbiAdmin struct {
	t             testing.TB
	target, token string
}

func newNBIAdmin(t testing.TB, target string) *nbiAdmin {
	a := &nbiAdmin{t: t, target: target}
	status, body := a.send(http.MethodPost, "/osm/admin/v1/tokens", map[string]any{"username": "admin", "password": "admin", "project_id": "admin"})
	Expect(status).To(Equal(http.StatusOK), string(body))
	var token struct{ ID string }
	Expect(json.Unmarshal(body, &token)).To(Succeed())
	a.token = token.ID
	return a
}

// send sends one request with a JSON body (none when body is nil) and returns the answer.
func (a *nbiAdmin) send(method, path string, body any) (int, []byte) {
	var payload io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		Expect(err).NotTo(HaveOccurred())
		payload = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, a.target+path, payload)
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	resp, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	return resp.StatusCode, answer
}

// expectDone sends a request that must succeed (2xx).
func (a *nbiAdmin) expectDone(method, path string, body any) {
	status, answer := a.send(method, path, body)
	Expect(status).To(BeNumerically("<", 300), "%s %s: %s", method, path, answer)
}

// What was probed by hand on OSM's real NBI and LCM, now through the operator: what OSM limits
// is found before anything is sent, and the operator never locks an OSM user out.
var _ = Describe("OSM's limits on a real NBI", Label("real-nbi"), func() {
	mutating := `^(POST|PUT|PATCH|DELETE) /osm/(nslcm|nsd|vnfpkgm)/`

	It("refuses a revision that would take the project past its quota of NS instances, sending nothing", func() {
		t := GinkgoTB()
		target := realNBITarget(t)
		admin := newNBIAdmin(t, target)
		// The NBI reads an edit of a project without its name as a rename, refused for admin.
		admin.expectDone(http.MethodPatch, "/osm/admin/v1/projects/admin", map[string]any{"name": "admin", "quotas": map[string]any{"ns_instances": 1}})
		DeferCleanup(func() {
			admin.expectDone(http.MethodPatch, "/osm/admin/v1/projects/admin", map[string]any{"name": "admin", "quotas": map[string]any{"ns_instances": 500}})
		})
		tn, log, cluster, d := realNBITenant(t, target, "admin", "admin")
		tn.clusterReason(cluster, metav1.ConditionTrue, gitopsv1alpha1.ConnectedReason)
		tn.publish("demo", readDemoRepo(t)) // two NS instances: ldap and ldap-stack
		tn.eventuallyCondition(d, meta.ReadyCondition, And(HavePrefix("False "),
			ContainSubstring(`OSM's quota ns_instances of project "admin" is 1`)))
		tn.g.Expect(log.count(mutating)).To(BeZero(), "requests that change OSM:\n%s", log.summary())
	})

	It("refuses to move a KNF to a new package revision (instancesFollowPackages), sending nothing", func() {
		t := GinkgoTB()
		target := realNBITarget(t)
		tn, log, cluster, d := realNBITenant(t, target, "admin", "admin")
		tn.clusterReason(cluster, metav1.ConditionTrue, gitopsv1alpha1.ConnectedReason)
		tn.update(d, func(d *gitopsv1alpha1.OsmDeployment) {
			d.Spec.InstancesFollowPackages = true
			d.Spec.DeletionPolicy = gitopsv1alpha1.DeletionPolicyDelete
		})
		files := readDemoRepo(t)
		tn.eventuallyApplied(d, tn.publish("demo", files))
		DeferCleanup(func() { // terminates what it made, for the specs after it
			tn.deleteAll(d)
			tn.eventuallyGone(d)
		})
		before := log.count(mutating)
		const vnfd = "osm-pkgs/openldap_knf/openldap_vnfd.yaml"
		files[vnfd] = strings.Replace(files[vnfd], "  version:", "  software-version: \"1.1\"\n  version:", 1)
		tn.publish("demo", files)
		tn.eventuallyCondition(d, meta.ReadyCondition, And(HavePrefix("False "),
			ContainSubstring("spec.instancesFollowPackages would move VNF"), ContainSubstring("OSM 19's LCM fails that move")))
		tn.g.Expect(log.count(mutating)).To(Equal(before), "requests that change OSM:\n%s", log.summary())
	})

	It("never locks out a user whose password is wrong: two failed logins, then none", func() {
		t := GinkgoTB()
		target := realNBITarget(t)
		admin := newNBIAdmin(t, target)
		const user, password = "osmops-probe", "Probe#1234x"
		admin.expectDone(http.MethodPost, "/osm/admin/v1/users", map[string]any{"username": user, "password": password,
			"project_role_mappings": []map[string]any{{"project": "admin", "role": "project_user"}}})
		DeferCleanup(func() { admin.expectDone(http.MethodDelete, "/osm/admin/v1/users/"+user, nil) })
		tn, log, cluster, _ := realNBITenant(t, target, user, "Wrong#0000x")
		// A refused login is not tried again by itself; a person asking three times more gets one
		// more login, and the rest held back: OSM locks the user at its 5th failed login.
		tn.clusterReason(cluster, metav1.ConditionFalse, gitopsv1alpha1.AuthenticationFailedReason)
		for i := 1; i <= 3; i++ {
			tn.requestCheck(cluster, fmt.Sprintf("retry-%d", i))
		}
		tn.clusterReason(cluster, metav1.ConditionFalse, gitopsv1alpha1.LoginHeldBackReason)
		tn.g.Expect(log.count(`^POST /osm/admin/v1/tokens 401$`)).To(Equal(2), "failed logins:\n%s", log.summary())
		status, answer := (&nbiAdmin{t: t, target: target}).send(http.MethodPost, "/osm/admin/v1/tokens",
			map[string]any{"username": user, "password": password, "project_id": "admin"})
		tn.g.Expect(status).To(Equal(http.StatusOK), "the user's own login: %s", answer)
	})
})
