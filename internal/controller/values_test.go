package controller

import (
	"math/rand/v2"
	"strings"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/nbisim"
	"github.com/osmops/osmops/internal/testing/osmtenant"
)

// testValuesSecret is a Helm value kept in a Secret: like testPassword, it must never leak
// (checkSuiteKeptSecrets).
const testValuesSecret = "v4lue-fr0m-a-Secret-osmops"

// testValuesLeaf is a leaf of a values document kept in a Secret: it must never leak either.
const testValuesLeaf = "l3af-of-a-values-document"

// nsInstanceFileWithValuesFrom is nsInstanceFile whose KDU also reads adminPassword from the
// key password of the Secret secretName.
func nsInstanceFileWithValuesFrom(name, replicaCount, secretName string) string {
	return strings.Replace(nsInstanceFile(name, replicaCount), "  params:\n",
		"  valuesFrom:\n    - kind: Secret\n      name: "+secretName+"\n      valuesKey: password\n      targetPath: adminPassword\n  params:\n", 1)
}

// noDriftCheck sets an interval longer than any test: what happens was triggered.
func noDriftCheck(d *gitopsv1alpha1.OsmDeployment) {
	d.Spec.Interval = &metav1.Duration{Duration: 24 * time.Hour}
}

var _ = Describe("Values from Secrets and ConfigMaps", func() {
	It("secret value change upgrades only the KDUs that read it", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		secret := osmtenant.ValuesSecret(tn.namespace, "ldap-admin", map[string]string{"password": testValuesSecret})
		tn.g.Expect(k8sClient.Create(tn.ctx, secret)).To(Succeed())
		files := demoRepo("1", "ldap", "ldap2")
		files["deploy/ldap.osmops.yaml"] = nsInstanceFileWithValuesFrom("ldap", "1", "ldap-admin")
		revision := tn.publish("gitops", files)
		d := tn.deployment("ldap", "gitops", noDriftCheck)
		applied := tn.eventuallyApplied(d, revision)
		tn.g.Expect(tn.kduValues("ldap")).To(Equal(map[string]any{"replicaCount": "1", "adminPassword": testValuesSecret}))
		tn.g.Expect(tn.kduValues("ldap2")).To(Equal(map[string]any{"replicaCount": "1"}))
		digest := applied.Status.Inventory.NsInstances[0].Digest
		tn.g.Expect(digest).To(HavePrefix("hmac-sha256:"))
		tn.sim.ResetStats()

		// The Secret is labelled: its change is seen without waiting for the drift interval.
		tn.g.Eventually(func() error {
			got := &corev1.Secret{}
			if err := k8sClient.Get(tn.ctx, client.ObjectKeyFromObject(secret), got); err != nil {
				return err
			}
			got.Data["password"] = []byte("rotated-" + testValuesSecret)
			return k8sClient.Update(tn.ctx, got)
		}).Should(Succeed())
		tn.g.Eventually(func() any { return tn.kduValues("ldap")["adminPassword"] }).Should(Equal("rotated-" + testValuesSecret))
		tn.g.Eventually(func() string { return tn.get(d).Status.Inventory.NsInstances[0].Digest }).ShouldNot(Equal(digest))
		tn.eventuallyApplied(d, revision)
		tn.g.Expect(tn.kduValues("ldap2")).To(Equal(map[string]any{"replicaCount": "1"}))
		tn.g.Expect(tn.mutatingRequests()).To(BeEquivalentTo(1), tn.describe(d))
		// The event says where the change came from: the Secret, by name, not Git.
		tn.g.Expect(eventsWith(d.Namespace, d.Name, corev1.EventTypeNormal, gitopsv1alpha1.ProgressingReason)).To(ContainElement(
			"Normal Progressing: " + revision + ": upgrade ldap (KDU ldap of VNF openldap: values changed in Secret ldap-admin); 1 OSM operation(s) started"))
	})

	It("missing values reference waits and recovers", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		files := demoRepo("1", "ldap")
		files["deploy/ldap.osmops.yaml"] = nsInstanceFileWithValuesFrom("ldap", "1", "ldap-admin")
		revision := tn.publish("gitops", files)
		d := tn.deployment("ldap", "gitops", noDriftCheck)
		tn.g.Eventually(func() string { return tn.condition(d, "Ready") }).Should(Equal(
			"False ValuesUnresolved: waiting for the values of revision " + revision + `: 1 unresolved values reference(s): deploy/ldap.osmops.yaml:10: field "kdu.valuesFrom[0]" names Secret ldap-admin, which does not exist in the OsmDeployment's namespace`))
		tn.g.Expect(tn.instances("ldap")).To(BeEmpty())

		tn.g.Expect(k8sClient.Create(tn.ctx, osmtenant.ValuesSecret(tn.namespace, "ldap-admin", map[string]string{"password": testValuesSecret}))).To(Succeed())
		tn.eventuallyApplied(d, revision)
		tn.g.Expect(tn.kduValues("ldap")).To(Equal(map[string]any{"replicaCount": "1", "adminPassword": testValuesSecret}))
	})

	It("substitution serves two deployments from one repository", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		tn.g.Expect(k8sClient.Create(tn.ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "production", Namespace: tn.namespace},
			Data:       map[string]string{"env": "production", "replicas": "3"},
		})).To(Succeed())
		tn.g.Expect(k8sClient.Create(tn.ctx, osmtenant.ValuesSecret(tn.namespace, "production-secrets",
			map[string]string{"password": testValuesSecret}))).To(Succeed())
		// One repository: the instance's name and values are variables, and the packages are
		// shared by the two OsmDeployments.
		files := demoRepo("1")
		files["deploy/ldap.osmops.yaml"] = strings.Replace(nsInstanceFile("ldap-${env}", "${replicas:=1}"),
			"  params:\n", "  params:\n    adminPassword: \"${password:=none}\"\n", 1)
		revision := tn.publish("gitops", files)
		staging := tn.deployment("staging", "gitops", func(d *gitopsv1alpha1.OsmDeployment) {
			d.Spec.PostBuild = &gitopsv1alpha1.PostBuild{Substitute: map[string]string{"env": "staging"}, Strict: true}
		})
		production := tn.deployment("production", "gitops", func(d *gitopsv1alpha1.OsmDeployment) {
			d.Spec.PostBuild = &gitopsv1alpha1.PostBuild{
				SubstituteFrom: []gitopsv1alpha1.SubstituteReference{
					{Kind: "ConfigMap", Name: "production"},
					{Kind: "Secret", Name: "production-secrets"},
					{Kind: "ConfigMap", Name: "absent", Optional: true},
				},
				// substitute wins over substituteFrom, as in Flux.
				Substitute: map[string]string{"replicas": "2"},
			}
		})
		tn.eventuallyApplied(staging, revision)
		tn.eventuallyApplied(production, revision)
		tn.g.Expect(tn.kduValues("ldap-staging")).To(Equal(map[string]any{"replicaCount": "1", "adminPassword": "none"}))
		tn.g.Expect(tn.kduValues("ldap-production")).To(Equal(map[string]any{"replicaCount": "2", "adminPassword": testValuesSecret}))
		tn.g.Expect(tn.get(production).Status.Inventory.NsInstances[0].Digest).To(HavePrefix("hmac-sha256:"))
		tn.g.Expect(tn.get(staging).Status.Inventory.NsInstances[0].Digest).To(HavePrefix("sha256:"))

		// Strict: a variable without value and without default stops the revision at its line.
		files["deploy/ldap.osmops.yaml"] = strings.Replace(files["deploy/ldap.osmops.yaml"], "description: Demo LDAP NS", "description: ${team}", 1)
		broken := tn.publish("gitops", files)
		tn.g.Eventually(func() string { return tn.condition(staging, "Ready") }).Should(Equal(
			"False ValidationFailed: revision " + broken + ` rejected, nothing applied: invalid revision, 1 problem: deploy/ldap.osmops.yaml:3: variable substitution (spec.postBuild) failed: variable not set (strict mode): "team"`))
		tn.g.Eventually(func() string { return tn.get(production).Status.LastAppliedRevision }).Should(Equal(broken))
	})

	// A variable from a substituteFrom Secret never shows in status or events, whatever step
	// quotes it (the check of a VIM account OSM lacks, a file the value breaks) and however it is
	// quoted: the values below hold quotes, a backslash, non-ASCII and a terminal escape.
	Context("secret variables never show in status or events", func() {
		// A slice, not a map: the specs of a tree must come in the same order every time.
		for _, tc := range []struct{ name, secret string }{
			{"unknown-vim", `secret-vim-"q"-'s'-é密-\x`},
			{"breaks-yaml", "secret-vim-\x1b[31m-\u202e"},
		} {
			name, secret := tc.name, tc.secret
			It(name, func() {
				t := GinkgoTB()
				tn := newTenant(t)
				tn.g.Expect(k8sClient.Create(tn.ctx, osmtenant.ValuesSecret(tn.namespace, "vims",
					map[string]string{"vim": secret}))).To(Succeed())
				files := demoRepo("1", "ldap")
				files["deploy/ldap.osmops.yaml"] = strings.Replace(files["deploy/ldap.osmops.yaml"],
					"vimAccountName: "+testVIMAccount, "vimAccountName: ${vim}", 1)
				d := tn.deployment("ldap", "gitops", func(d *gitopsv1alpha1.OsmDeployment) {
					d.Spec.PostBuild = &gitopsv1alpha1.PostBuild{SubstituteFrom: []gitopsv1alpha1.SubstituteReference{{Kind: "Secret", Name: "vims"}}}
				})
				tn.publish("gitops", files)
				tn.eventuallyCondition(d, meta.ReadyCondition, HavePrefix("False "+gitopsv1alpha1.ValidationFailedReason))
				var shown []string
				for _, c := range tn.get(d).Status.Conditions {
					shown = append(shown, c.Message)
				}
				for _, e := range recorder.of(d.Namespace, d.Name) {
					shown = append(shown, e.Message)
				}
				for _, text := range shown {
					tn.g.Expect(text).NotTo(ContainSubstring("secret-vim"), "the Secret's value shows")
				}
			})
		}
	})

	// A value a KDU's valuesFrom reads from a Secret never shows in status, history or events
	// when OSM quotes it back (helm's error on a failed install), neither a value taken whole
	// (targetPath) nor a leaf of a values document, in Python's quoting, nor cut at a bound.
	It("a Secret too large to mask holds the revision back", func() {
		tn := newTenant(GinkgoTB())
		// Random letters: texts that share no start, so that each byte is one the mask holds.
		random := rand.New(rand.NewPCG(3, 4))
		large := make([]byte, gitops.MaxMaskBytes+1)
		for i := range large {
			large[i] = byte('a' + random.IntN(26))
		}
		secret := osmtenant.ValuesSecret(tn.namespace, "ldap-admin", map[string]string{
			"password": testValuesSecret, "ca-bundle": string(large)})
		tn.g.Expect(k8sClient.Create(tn.ctx, secret)).To(Succeed())
		files := demoRepo("1", "ldap")
		files["deploy/ldap.osmops.yaml"] = nsInstanceFileWithValuesFrom("ldap", "1", "ldap-admin")
		d := tn.deployment("ldap", "gitops", noDriftCheck)
		revision := tn.publish("gitops", files)
		tn.eventuallyCondition(d, meta.ReadyCondition, And(
			HavePrefix("False "+gitopsv1alpha1.ValuesUnresolvedReason+": waiting for the values of revision "),
			ContainSubstring("reading Secret ldap-admin: the values read from Secrets"),
			ContainSubstring("keep in Secrets only what is secret")))
		tn.g.Expect(tn.instances("ldap")).To(BeEmpty(), "nothing is applied")
		tn.g.Expect(tn.describe(d)).NotTo(ContainSubstring(string(large[:16])))

		By("the Secret holding only what is secret, the revision applies")
		tn.g.Expect(k8sClient.Get(tn.ctx, client.ObjectKeyFromObject(secret), secret)).To(Succeed())
		secret.Data = map[string][]byte{"password": []byte(testValuesSecret)}
		tn.g.Expect(k8sClient.Update(tn.ctx, secret)).To(Succeed())
		tn.eventuallyApplied(d, revision)
		tn.g.Expect(tn.kduValues("ldap")).To(HaveKeyWithValue("adminPassword", testValuesSecret))
	})

	It("secret values from valuesFrom never show when OSM quotes them", func() {
		tn := newTenant(GinkgoTB())
		const leaf = testValuesLeaf
		tn.g.Expect(k8sClient.Create(tn.ctx, osmtenant.ValuesSecret(tn.namespace, "ldap-admin", map[string]string{
			"password": testValuesSecret, "values.yaml": "auth:\n  token: " + leaf + "\n"}))).To(Succeed())
		files := demoRepo("1", "ldap")
		files["deploy/ldap.osmops.yaml"] = strings.Replace(nsInstanceFileWithValuesFrom("ldap", "1", "ldap-admin"),
			"  valuesFrom:\n", "  valuesFrom:\n    - kind: Secret\n      name: ldap-admin\n", 1)
		message := "helm install failed: adminPassword: invalid value '" + testValuesSecret + "', auth.token " +
			strings.Repeat("x", gitopsv1alpha1.MaxHistoryMessageLength-60) + leaf
		tn.g.Expect(tn.sim.FailOperations(nbisim.OperationFailure{Operation: "instantiate", NSName: "ldap", Message: message})).To(Succeed())
		d := tn.deployment("ldap", "gitops", noDriftCheck)
		tn.publish("gitops", files)
		tn.eventuallyCondition(d, meta.ReadyCondition, And(HavePrefix("False "), ContainSubstring("helm install failed")))

		got := tn.get(d)
		var shown []string
		for _, c := range got.Status.Conditions {
			shown = append(shown, c.Message)
		}
		for _, snapshot := range got.Status.History {
			shown = append(shown, snapshot.Message)
			for _, op := range snapshot.Operations {
				shown = append(shown, op.Message)
			}
		}
		for _, e := range recorder.of(d.Namespace, d.Name) {
			shown = append(shown, e.Message)
		}
		tn.g.Expect(strings.Join(shown, "\n")).To(ContainSubstring(gitops.SecretMask))
		for _, text := range shown {
			tn.g.Expect(text).NotTo(ContainSubstring(testValuesSecret[:6]), "the Secret's value shows")
			tn.g.Expect(text).NotTo(ContainSubstring(leaf[:6]), "a leaf of the Secret's values document shows")
		}
	})
})
