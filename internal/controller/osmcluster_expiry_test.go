package controller

import (
	"context"
	"errors"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/osm"
	"github.com/osmops/osmops/internal/testing/osmtenant"
)

// expiryChecker is an NBI client whose user expires as expiry says (or unreadable with err).
type expiryChecker struct {
	healthChecker
	expiry osm.UserExpiry
	err    error
}

func (c *expiryChecker) UserExpiry(context.Context) (osm.UserExpiry, error) { return c.expiry, c.err }

var _ = Describe("Credentials expiry", func() {
	It("warns within the warning time, once per crossing, by the reconciler's clock", func() {
		g := NewWithT(GinkgoTB())
		start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
		clock := testingclock.NewFakePassiveClock(start)
		events := newEventLog()
		r := &OsmClusterReconciler{EventRecorder: events, Clock: clock, ExpiryWarning: 7 * 24 * time.Hour}
		obj := &gitopsv1alpha1.OsmCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "t", Name: "osm"},
			Spec: gitopsv1alpha1.OsmClusterSpec{CredentialsSecretRef: osmtenant.Cluster("t", "").Spec.CredentialsSecretRef}}
		days := func(n float64) time.Time { return start.Add(time.Duration(n * 24 * float64(time.Hour))) }
		checker := &expiryChecker{expiry: osm.UserExpiry{PasswordExpires: days(10), AccountExpires: days(90)}}
		check := func(at float64) {
			clock.SetTime(days(at))
			r.reportExpiry(context.Background(), obj, checker)
		}
		expiring := func() string {
			c := conditions.Get(obj, gitopsv1alpha1.CredentialsExpiringCondition)
			if c == nil {
				return ""
			}
			return string(c.Status) + " " + c.Reason + ": " + c.Message
		}

		check(0)
		g.Expect(obj.Status.PasswordExpiresAt).To(Equal(&metav1.Time{Time: days(10)}))
		g.Expect(obj.Status.AccountExpiresAt).To(Equal(&metav1.Time{Time: days(90)}))
		g.Expect(expiring()).To(BeEmpty())
		g.Expect(events.of("t", "osm")).To(BeEmpty())

		// Within 7 days of the password's expiry: one Warning, however many checks follow.
		check(3.5)
		g.Expect(expiring()).To(Equal("True PasswordExpiring: the password in Secret osm-credentials expires at " +
			"2026-11-11T00:00:00Z, when OSM wants it changed: change it in OSM, then in the Secret"))
		check(5)
		check(6)
		g.Expect(events.messagesOf("t", "osm")).To(Equal("Warning PasswordExpiring: the password in Secret osm-credentials " +
			"expires at 2026-11-11T00:00:00Z, when OSM wants it changed: change it in OSM, then in the Secret"))

		// Changed: the warning goes. An unreadable record changes nothing.
		checker.expiry.PasswordExpires = days(36)
		check(6)
		g.Expect(expiring()).To(BeEmpty())
		checker.err = errors.New("OSM NBI GET /osm/admin/v1/users/x: 500")
		check(86)
		g.Expect(expiring()).To(BeEmpty())
		g.Expect(obj.Status.PasswordExpiresAt).To(Equal(&metav1.Time{Time: days(36)}))

		// The account next: its reason comes first, with the password's too when both are near.
		checker.err = nil
		checker.expiry.PasswordExpires = days(88)
		check(86)
		g.Expect(expiring()).To(Equal("True AccountExpiring: OSM's account of the user of Secret osm-credentials expires at " +
			"2027-01-30T00:00:00Z, when OSM refuses its logins: have an OSM administrator renew it; the password in Secret " +
			"osm-credentials expires at 2027-01-28T00:00:00Z, when OSM wants it changed: change it in OSM, then in the Secret"))
		g.Expect(events.of("t", "osm")).To(HaveLen(2))
	})

	It("shows when OSM expires the password and the account, and warns before", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		cluster := func() *gitopsv1alpha1.OsmCluster {
			got := &gitopsv1alpha1.OsmCluster{}
			tn.g.Expect(k8sClient.Get(tn.ctx, client.ObjectKeyFromObject(tn.cluster), got)).To(Succeed())
			return got
		}
		// The simulator's user (not admin) expires as OSM's would: in 30 and 90 days.
		tn.g.Eventually(func() *metav1.Time { return cluster().Status.AccountExpiresAt }).ShouldNot(BeNil())
		tn.g.Expect(cluster().Status.PasswordExpiresAt).NotTo(BeNil())
		tn.g.Expect(conditions.Get(cluster(), gitopsv1alpha1.CredentialsExpiringCondition)).To(BeNil())

		password := time.Now().Add(3 * 24 * time.Hour).Truncate(time.Second).UTC()
		tn.sim.SetUserExpiry(password, time.Now().Add(60*24*time.Hour))
		tn.requestCheck(tn.cluster, "expiry-1")
		tn.g.Expect(cluster().Status.PasswordExpiresAt.Time).To(BeTemporally("==", password))
		condition := conditions.Get(cluster(), gitopsv1alpha1.CredentialsExpiringCondition)
		tn.g.Expect(condition).NotTo(BeNil())
		tn.g.Expect(condition.Reason).To(Equal(gitopsv1alpha1.PasswordExpiringReason))
		tn.g.Expect(condition.Message).To(ContainSubstring("expires at " + password.Format(time.RFC3339)))
		tn.g.Expect(conditions.IsReady(cluster())).To(BeTrue())
		tn.requestCheck(tn.cluster, "expiry-2")
		var warnings []recordedEvent
		for _, e := range recorder.of(tn.namespace, tn.cluster.Name) {
			if e.Reason == gitopsv1alpha1.PasswordExpiringReason {
				warnings = append(warnings, e)
			}
		}
		tn.g.Expect(warnings).To(HaveLen(1))
	})
})
