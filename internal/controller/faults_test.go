package controller

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/nbisim"
)

// The fault tests break the NBI in one way each, while a revision is applied: the operator
// must say what happened in its conditions while the fault holds, converge once it clears
// (without a restart), and never make a second NS instance of one name nor send one intent
// twice.

// Routes of the NBI that the faults aim at, as "METHOD route"; nsInstancesPath is where NS
// instances are created and listed.
const (
	nsInstancesPath = "/osm/nslcm/v1/ns_instances_content"
	createNSRoute   = http.MethodPost + " " + nsInstancesPath
	upgradeRoute    = http.MethodPost + " /osm/nslcm/v1/ns_instances/{nsInstanceId}/action"
	deleteNSRoute   = http.MethodDelete + " " + nsInstancesPath + "/{nsInstanceContentId}"
)

// Reads that count the reconciles of an OsmDeployment (eventuallyReconciledSinceNow):
// listNSDescriptorsRoute is read once by each observation of OSM and by nothing else, and
// listOperationsRoute once by each reconcile while OSM operations run (and by observations,
// which wait for those operations to end).
const (
	listNSDescriptorsRoute = http.MethodGet + " /osm/nsd/v1/ns_descriptors"
	listOperationsRoute    = http.MethodGet + " /osm/nslcm/v1/ns_lcm_op_occs"
)

// addFault activates a fault of the tenant's simulator until the test clears it.
func (tn *tenant) addFault(f nbisim.Fault) {
	tn.t.Helper()
	tn.g.Expect(tn.sim.AddFault(f)).To(Succeed())
}

// acceptedRequests counts the requests the NBI accepted (a 2xx answer), by "METHOD route":
// what reached OSM, whatever the operator made of the answer.
func (tn *tenant) acceptedRequests() map[string]int64 {
	counts := map[string]int64{}
	for _, e := range tn.sim.Stats().Endpoints {
		if e.Status >= 200 && e.Status < 300 {
			counts[e.Method+" "+e.Route] += e.Requests
		}
	}
	return counts
}

// eventuallyCondition waits until a condition of d, as "Status Reason: Message", matches.
func (tn *tenant) eventuallyCondition(d *gitopsv1alpha1.OsmDeployment, conditionType string, matcher OmegaMatcher) {
	tn.t.Helper()
	tn.g.Eventually(func() string { return tn.condition(d, conditionType) }).Should(matcher, func() string { return tn.describe(d) })
}

// eventuallyReconciledSinceNow waits until the tenant's NBI has received three more requests
// for methodRoute, a read that each reconcile of one OsmDeployment makes once: as its
// reconciles never overlap, the second of them began after this call, and the third once the
// second had ended and written its status. Called after a change, it is the evidence that a
// reconcile saw the change, before a check that the change left OSM alone; such a check could
// otherwise pass only because no reconcile had run yet.
func (tn *tenant) eventuallyReconciledSinceNow(methodRoute string) {
	tn.t.Helper()
	seen := tn.countRequests(methodRoute)
	tn.g.Eventually(func() int64 { return tn.countRequests(methodRoute) }).Should(BeNumerically(">=", seen+3),
		"reconciles reading %s", methodRoute)
}

// expectConverged waits until d has applied revision and checks what must then hold: each NS
// instance of want (name to replicaCount) runs exactly once in OSM, READY, with its value, and
// the inventory holds its id; no other NS instance runs.
func (tn *tenant) expectConverged(d *gitopsv1alpha1.OsmDeployment, revision string, want map[string]string) {
	tn.t.Helper()
	got := tn.eventuallyApplied(d, revision)
	inventory := map[string]string{}
	for _, e := range got.Status.Inventory.NsInstances {
		inventory[e.Name] = e.ID
	}
	running := map[string]string{}
	for _, ns := range tn.sim.State().NSInstances {
		_, twice := running[ns.Name]
		tn.g.Expect(twice).To(BeFalse(), "two NS instances named %s\n%s", ns.Name, tn.describe(d))
		running[ns.Name] = ns.ID
		tn.g.Expect(ns.NSState).To(Equal("READY"), "NS instance %s\n%s", ns.Name, tn.describe(d))
	}
	tn.g.Expect(running).To(Equal(inventory), "OSM's NS instances and the inventory\n%s", tn.describe(d))
	tn.g.Expect(running).To(HaveLen(len(want)))
	for name, replicas := range want {
		tn.g.Expect(tn.kduValues(name)).To(Equal(map[string]any{"replicaCount": replicas}), "values of %s", name)
	}
}

// publishHeld holds OSM's operations, publishes files as the GitRepository gitops and waits
// until d has recorded the operations it started (an apply records them all at once), so that
// a fault can strike while they run. It returns the revision.
func (tn *tenant) publishHeld(d *gitopsv1alpha1.OsmDeployment, files map[string]string) string {
	tn.t.Helper()
	tn.sim.HoldOperations()
	revision := tn.publish("gitops", files)
	tn.g.Eventually(func() []gitopsv1alpha1.OperationEntry { return tn.get(d).Status.Operations }).ShouldNot(BeEmpty(), func() string { return tn.describe(d) })
	return revision
}

// forceDelete removes the only NS instance named name from OSM, as a person with the osm
// client would, and returns its id.
func (tn *tenant) forceDelete(name string) string {
	tn.t.Helper()
	instances := tn.instances(name)
	tn.g.Expect(instances).To(HaveLen(1), "NS instances named %s", name)
	_, err := tn.nbiClient().DeleteNSInstance(tn.ctx, instances[0].ID, true)
	tn.g.Expect(err).NotTo(HaveOccurred())
	return instances[0].ID
}

// warnings returns the Warning events of d, as "Reason: message", but for waits on the
// source and the OsmCluster, which tests make in any order and delete before d.
func warnings(d *gitopsv1alpha1.OsmDeployment) []string {
	var out []string
	for _, e := range recorder.of(d.Namespace, d.Name) {
		if e.Type == corev1.EventTypeWarning && e.Reason != gitopsv1alpha1.SourceNotReadyReason && e.Reason != gitopsv1alpha1.ClusterNotReadyReason {
			out = append(out, e.Reason+": "+e.Message)
		}
	}
	return out
}

var _ = Describe("NBI faults", func() {
	It("survives a burst of server errors, creating once", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("ldap", "gitops")
		tn.addFault(nbisim.Fault{Method: http.MethodPost, PathPrefix: nsInstancesPath, Status: http.StatusInternalServerError})
		revision := tn.publish("gitops", demoRepo("1", "ldap"))

		tn.eventuallyCondition(d, meta.ReadyCondition, Equal("False "+gitopsv1alpha1.OSMUnavailableReason+": waiting for OsmCluster osm: applying "+revision+
			": create NS instance ldap: OSM NBI POST "+nsInstancesPath+": 500 INTERNAL_SERVER_ERROR: fault injected by the NBI simulator"))
		tn.g.Expect(tn.instances("ldap")).To(BeEmpty())

		tn.sim.ClearFaults()
		tn.expectConverged(d, revision, map[string]string{"ldap": "1"})
		tn.g.Expect(tn.acceptedRequests()[createNSRoute]).To(BeEquivalentTo(1))
	})

	It("reports NBI timeouts and survives them", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		impatient := tn.newCluster("impatient", tn.nbi.URL, "osm-credentials", func(c *gitopsv1alpha1.OsmCluster) {
			c.Spec.Timeout = &metav1.Duration{Duration: 300 * time.Millisecond}
		})
		tn.clusterReason(impatient, metav1.ConditionTrue, gitopsv1alpha1.ConnectedReason)
		d := tn.deployment("ldap", "gitops", func(d *gitopsv1alpha1.OsmDeployment) { d.Spec.ClusterRef.Name = "impatient" })

		// Every list of NS instances outlasts the timeout: nothing can be planned.
		tn.addFault(nbisim.Fault{Method: http.MethodGet, PathPrefix: nsInstancesPath, Latency: time.Second})
		revision := tn.publish("gitops", demoRepo("1", "ldap"))
		tn.eventuallyCondition(d, meta.ReadyCondition, Equal("False "+gitopsv1alpha1.OSMUnavailableReason+
			": waiting for OsmCluster impatient: observing OSM: listing NS instances: OSM NBI GET "+nsInstancesPath+": context deadline exceeded"))
		tn.g.Expect(tn.mutatingRequests()).To(BeZero())

		// The create outlasts the timeout, but OSM makes the instance all the same: the operator,
		// which never saw the answer, must find it instead of creating a second one.
		tn.sim.ClearFaults()
		tn.addFault(nbisim.Fault{Method: http.MethodPost, PathPrefix: nsInstancesPath, Latency: time.Second})
		tn.expectConverged(d, revision, map[string]string{"ldap": "1"})
		tn.g.Expect(tn.acceptedRequests()[createNSRoute]).To(BeEquivalentTo(1))
		tn.g.Expect(warnings(d)).To(ContainElement(HavePrefix(gitopsv1alpha1.OSMUnavailableReason + ": waiting for OsmCluster impatient: applying " + revision +
			": create NS instance ldap: OSM NBI POST " + nsInstancesPath + ": context deadline exceeded")))
	})

	It("survives connection resets, creating once", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("ldap", "gitops")
		tn.addFault(nbisim.Fault{Method: http.MethodPost, PathPrefix: nsInstancesPath, Reset: true})
		revision := tn.publish("gitops", demoRepo("1", "ldap"))

		tn.eventuallyCondition(d, meta.ReadyCondition, MatchRegexp("^False "+gitopsv1alpha1.OSMUnavailableReason+": waiting for OsmCluster osm: applying "+revision+
			": create NS instance ldap: OSM NBI POST "+nsInstancesPath+": (EOF|.*connection reset by peer)$"))
		tn.sim.ClearFaults()
		tn.expectConverged(d, revision, map[string]string{"ldap": "1"})
		tn.g.Expect(tn.acceptedRequests()[createNSRoute]).To(BeEquivalentTo(1))
	})

	It("survives latency spikes", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("ldap", "gitops")
		// Half of the requests take 200 ms more, well within the timeout: slower, never failed.
		tn.addFault(nbisim.Fault{Latency: 200 * time.Millisecond, Rate: 0.5})
		tn.expectConverged(d, tn.publish("gitops", demoRepo("1", "ldap", "ldap2")), map[string]string{"ldap": "1", "ldap2": "1"})
		tn.expectConverged(d, tn.publish("gitops", demoRepo("2", "ldap", "ldap2")), map[string]string{"ldap": "2", "ldap2": "2"})
		tn.g.Expect(warnings(d)).To(BeEmpty())
		tn.g.Expect(tn.acceptedRequests()).To(HaveKeyWithValue(createNSRoute, BeEquivalentTo(2)))
		tn.g.Expect(tn.acceptedRequests()).To(HaveKeyWithValue(upgradeRoute, BeEquivalentTo(2)))
	})

	It("logs in again when the token is revoked mid-revision", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("ldap", "gitops")
		revision := tn.publishHeld(d, demoRepo("1", "ldap"))

		sessions := tn.sim.Stats().SessionRequests
		tn.g.Expect(tn.sim.RevokeTokens()).To(BeNumerically(">", 0))
		tn.sim.ReleaseOperations()
		tn.expectConverged(d, revision, map[string]string{"ldap": "1"})
		// The polls after the revocation logged in again, without a failure to show.
		tn.g.Expect(tn.sim.Stats().SessionRequests).To(BeNumerically(">", sessions))
		tn.g.Expect(warnings(d)).To(BeEmpty())
		tn.g.Expect(tn.acceptedRequests()[createNSRoute]).To(BeEquivalentTo(1))
	})

	It("retries a failed instantiate", Label("slow"), func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("ldap", "gitops")
		tn.g.Expect(tn.sim.FailOperations(nbisim.OperationFailure{Operation: "instantiate", NSName: "ldap",
			Message: "helm install failed: no Kubernetes cluster answers", Count: 1})).To(Succeed())
		revision := tn.publish("gitops", demoRepo("1", "ldap"))

		failure := gitopsv1alpha1.OperationFailedReason + ": NS instance ldap: instantiate operation FAILED: helm install failed: no Kubernetes cluster answers"
		tn.eventuallyCondition(d, meta.StalledCondition, Equal("True "+failure))
		tn.g.Expect(tn.condition(d, meta.ReadyCondition)).To(Equal("False " + failure))
		tn.g.Expect(tn.instances("ldap")).To(ConsistOf(HaveField("NSState", "BROKEN")))

		// A reconcile request does not retry it: OSM cannot instantiate a BROKEN instance again,
		// and the operator does not replace it by itself (see docs/reliability.md).
		requestReconcile(tn, d, "retry")
		tn.g.Eventually(func() string { return tn.get(d).Status.LastHandledReconcileAt }).Should(Equal("retry"))
		tn.g.Expect(tn.condition(d, meta.StalledCondition)).To(Equal("True " + failure))
		tn.g.Expect(tn.acceptedRequests()[createNSRoute]).To(BeEquivalentTo(1))

		// A person removes the broken instance; the next reconcile makes it again.
		tn.forceDelete("ldap")
		requestReconcile(tn, d, "after-cleanup")
		tn.expectConverged(d, revision, map[string]string{"ldap": "1"})
		tn.g.Expect(tn.acceptedRequests()[createNSRoute]).To(BeEquivalentTo(2))
	})

	It("retries a temporarily failed upgrade", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		// Frequent drift checks: the reconciles that could send the failed intent again by themselves.
		d := tn.deployment("ldap", "gitops", func(d *gitopsv1alpha1.OsmDeployment) {
			d.Spec.Interval = &metav1.Duration{Duration: 200 * time.Millisecond}
		})
		tn.expectConverged(d, tn.publish("gitops", demoRepo("1", "ldap")), map[string]string{"ldap": "1"})
		tn.g.Expect(tn.sim.FailOperations(nbisim.OperationFailure{Operation: "upgrade", NSName: "ldap", State: "FAILED_TEMP",
			Message: "helm upgrade timed out", Count: 1})).To(Succeed())
		tn.sim.ResetStats()

		revision := tn.publish("gitops", demoRepo("2", "ldap"))
		tn.eventuallyCondition(d, meta.StalledCondition, Equal("True "+gitopsv1alpha1.OperationFailedReason+
			": NS instance ldap: action operation FAILED_TEMP: helm upgrade timed out"))
		// A failed intent is not sent again by itself (each drift check observes OSM, listing the NS
		// descriptors once)...
		tn.eventuallyReconciledSinceNow(listNSDescriptorsRoute)
		tn.g.Expect(tn.acceptedRequests()[upgradeRoute]).To(BeEquivalentTo(1), tn.describe(d))
		// ... but at a person's request.
		requestReconcile(tn, d, "retry")
		tn.expectConverged(d, revision, map[string]string{"ldap": "2"})
		tn.g.Expect(tn.acceptedRequests()[upgradeRoute]).To(BeEquivalentTo(2))
	})

	// A revision whose create OSM refused for a while, while its upgrade went through, is not
	// reported applied when the upgrade ends: the create is sent again.
	It("does not report a partly failed apply as applied", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("ldap", "gitops")
		tn.expectConverged(d, tn.publish("gitops", demoRepo("1", "ldap")), map[string]string{"ldap": "1"})
		tn.sim.ResetStats()

		tn.addFault(nbisim.Fault{Method: http.MethodPost, PathPrefix: nsInstancesPath, Status: http.StatusServiceUnavailable})
		files := demoRepo("2", "ldap")
		files["deploy/ldap2.osmops.yaml"] = nsInstanceFile("ldap2", "1")
		revision := tn.publish("gitops", files)
		tn.g.Eventually(func() []string { return warnings(d) }).Should(ContainElement(
			"OSMUnavailable: waiting for OsmCluster osm: applying " + revision + ": create NS instance ldap2: OSM NBI POST " + nsInstancesPath +
				": 503 SERVICE_UNAVAILABLE: fault injected by the NBI simulator"))
		tn.sim.ClearFaults()

		tn.expectConverged(d, revision, map[string]string{"ldap": "2", "ldap2": "1"})
		tn.g.Expect(tn.acceptedRequests()).To(And(HaveKeyWithValue(createNSRoute, BeEquivalentTo(1)), HaveKeyWithValue(upgradeRoute, BeEquivalentTo(1))))
	})

	// OSM removes the operations of a deleted NS instance with it, so the missing instantiate looks
	// completed: the operator trusts finished operations (observing OSM again before Ready would
	// double a revision's reads) and the next drift check makes the instance again, once.
	It("recreates an instance deleted while its operation runs", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("ldap", "gitops", func(d *gitopsv1alpha1.OsmDeployment) {
			d.Spec.Interval = &metav1.Duration{Duration: time.Second}
		})
		revision := tn.publishHeld(d, demoRepo("1", "ldap"))

		deleted := tn.forceDelete("ldap")
		tn.sim.ReleaseOperations()

		tn.eventuallyRecreated(d, "ldap", deleted)
		tn.expectConverged(d, revision, map[string]string{"ldap": "1"})
		tn.g.Expect(recorder.messagesOf(d.Namespace, d.Name)).To(ContainSubstring("deleted in OSM outside Git: recreating it"))
		tn.g.Expect(tn.acceptedRequests()[createNSRoute]).To(BeEquivalentTo(2))
	})

	It("reconnects after an operator restart", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		d := tn.deployment("ldap", "gitops")
		tn.expectConverged(d, tn.publish("gitops", demoRepo("1", "ldap")), map[string]string{"ldap": "1"})

		// As after a restart: the pool has no client of the OsmCluster, which stays Ready, so no
		// readiness change triggers the OsmDeployment: it builds the client it needs itself.
		connections.Evict(client.ObjectKeyFromObject(tn.cluster))
		tn.expectConverged(d, tn.publish("gitops", demoRepo("2", "ldap")), map[string]string{"ldap": "2"})
		tn.g.Expect(recorder.messagesOf(d.Namespace, d.Name)).NotTo(ContainSubstring("not connected"))
	})

	It("soak: random revisions under random faults keep every invariant", Label("slow"), func() {
		t := GinkgoTB()
		if os.Getenv(soakEnv) != "1" {
			t.Skipf("set %s=1 to run the soak", soakEnv)
		}
		seed := uint64(1)
		if v := os.Getenv(soakSeedEnv); v != "" {
			parsed, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				t.Fatalf("%s: %v", soakSeedEnv, err)
			}
			seed = parsed
		}
		t.Logf("soak with seed %d (%s)", seed, soakSeedEnv)
		tn := newTenant(t)
		tn.sim.SetOperationDelay(50 * time.Millisecond)
		tn.updateCluster(func(c *gitopsv1alpha1.OsmCluster) { c.Spec.Timeout = &metav1.Duration{Duration: soakTimeout} })
		// A drift check every second makes again the instances deleted while their operation ran.
		deployment := tn.deployment("soak", "gitops", func(d *gitopsv1alpha1.OsmDeployment) {
			d.Spec.Interval = &metav1.Duration{Duration: soakDriftInterval}
		})
		s := &soak{tenant: tn, rng: rand.New(rand.NewPCG(seed, seed)), deployment: deployment,
			declared: map[string]string{}, faults: map[soakFault]int{}}

		started := time.Now()
		for i := range soakRevisions {
			if time.Since(started) > soakBudget {
				t.Fatalf("seed %d: the soak outlasted its budget of %s at revision %d", seed, soakBudget, i)
			}
			s.revision(i)
		}
		t.Logf("seed %d: %d revisions in %s (slowest %s); faults %v; %d NBI requests, %d of them broken by a fault; "+
			"OSM accepted %d creates, %d upgrades, %d deletes", seed, soakRevisions, time.Since(started).Round(time.Second),
			s.slowest.Round(time.Millisecond), s.faults, s.requests, s.broken, s.changes.creates, s.changes.upgrades, s.changes.deletes)
	})
})

// eventuallyRecreated waits until the inventory of d holds a new id for the NS instance name,
// whose instance with the id deleted was removed from OSM: the drift check made it again. Only
// then is a wait for Ready sure not to see the Ready of before the drift check.
func (tn *tenant) eventuallyRecreated(d *gitopsv1alpha1.OsmDeployment, name, deleted string) {
	tn.t.Helper()
	tn.g.Eventually(func() string {
		for _, e := range tn.get(d).Status.Inventory.NsInstances {
			if e.Name == name {
				return e.ID
			}
		}
		return ""
	}).Should(And(Not(BeEmpty()), Not(Equal(deleted))), func() string { return tn.describe(d) })
}

// updateCluster changes the tenant's OsmCluster with edit.
func (tn *tenant) updateCluster(edit func(*gitopsv1alpha1.OsmCluster)) {
	tn.t.Helper()
	tn.g.Eventually(func() error {
		got := &gitopsv1alpha1.OsmCluster{}
		if err := k8sClient.Get(tn.ctx, client.ObjectKeyFromObject(tn.cluster), got); err != nil {
			return err
		}
		edit(got)
		return k8sClient.Update(tn.ctx, got)
	}).Should(Succeed())
}

// The soak applies soakRevisions random revisions, each with a random fault, and checks after
// each what the fault tests check once. It is seeded (OSMOPS_SOAK_SEED, default 1), so a failure
// can be replayed, and bounded by soakBudget. It runs only with OSMOPS_SOAK=1:
//
//	OSMOPS_SOAK=1 go test ./internal/controller -ginkgo.focus soak -ginkgo.v -timeout 30m
const (
	soakEnv       = "OSMOPS_SOAK"
	soakSeedEnv   = "OSMOPS_SOAK_SEED"
	soakRevisions = 200
	soakBudget    = 20 * time.Minute
	// soakNames is the pool of NS instance names a revision draws from.
	soakNames = 6
	// soakTimeout is the NBI request timeout of the soak's OsmCluster; soakSlow outlasts it.
	soakTimeout = 500 * time.Millisecond
	soakSlow    = time.Second
	// soakDriftInterval is the interval of the soak's OsmDeployment.
	soakDriftInterval = time.Second
)

// soakFault is a kind of fault the soak injects into one revision.
type soakFault int

const (
	faultNone soakFault = iota
	faultServerErrors
	faultTimeout
	faultReset
	faultLatency
	faultTokenRevoked
	faultOperationFailed
	faultDeletedWhileRunning
	soakFaultKinds
)

func (f soakFault) String() string {
	return [...]string{"none", "5xx burst", "timeout", "connection reset", "latency spike", "token revoked",
		"operation FAILED or FAILED_TEMP", "NS deleted while its operation runs"}[f]
}

// soakTargets are the requests that the request faults aim at.
var soakTargets = []struct{ method, pathPrefix string }{
	{http.MethodPost, nsInstancesPath},
	{http.MethodPost, "/osm/nslcm/v1/ns_instances/"},
	{http.MethodDelete, nsInstancesPath},
	{http.MethodGet, nsInstancesPath},
	{"", "/osm/"},
}

// changeCounts are the changes a revision sends to OSM, as the NBI accepts them.
type changeCounts struct{ creates, upgrades, deletes int64 }

func (c changeCounts) add(o changeCounts) changeCounts {
	return changeCounts{c.creates + o.creates, c.upgrades + o.upgrades, c.deletes + o.deletes}
}

// soak is the state of a soak run.
type soak struct {
	*tenant
	rng        *rand.Rand
	deployment *gitopsv1alpha1.OsmDeployment
	// declared is what the last revision declared: NS instance name to replicaCount.
	declared map[string]string
	// step is the number of the revision under way.
	step     int
	faults   map[soakFault]int
	changes  changeCounts
	requests int64
	// broken counts the requests a fault broke.
	broken  int
	slowest time.Duration
}

// revision publishes the i-th revision with its fault, waits until it is applied, and checks
// the invariants and that OSM accepted exactly the changes the revision needs.
func (s *soak) revision(i int) {
	declared := map[string]string{}
	for n := range soakNames {
		if s.rng.IntN(10) < 6 {
			declared[fmt.Sprintf("ns-%d", n)] = strconv.Itoa(1 + s.rng.IntN(3))
		}
	}
	var created, changed []string
	want := changeCounts{}
	for name, replicas := range declared {
		previous, had := s.declared[name]
		switch {
		case !had:
			created = append(created, name)
		case previous != replicas:
			changed = append(changed, name)
		}
	}
	for name := range s.declared {
		if _, kept := declared[name]; !kept {
			want.deletes++
		}
	}
	// Sorted: the order of a map would make the draws below irreproducible.
	slices.Sort(created)
	slices.Sort(changed)
	want.creates, want.upgrades = int64(len(created)), int64(len(changed))

	fault := soakFault(s.rng.IntN(int(soakFaultKinds)))
	if (fault == faultOperationFailed || fault == faultDeletedWhileRunning) && len(created)+len(changed) == 0 {
		fault = faultNone // no operation runs to fail or to delete under
	}
	s.t.Logf("revision %d: %s; creates %v, upgrades %v, %d deletes", i, fault, created, changed, want.deletes)
	s.sim.ResetStats()
	started := time.Now()
	s.step = i
	revision, extra := s.inject(fault, demoRepoOf(declared), created, changed)
	s.faults[fault]++
	s.expectConverged(s.deployment, revision, declared)
	s.slowest = max(s.slowest, time.Since(started))
	s.broken += s.faultedRequests()
	s.sim.ClearFaults()
	s.sim.ClearOperationFailures()

	// Exactly the changes the revision needs reach OSM, plus those the fault calls for (a retry
	// a person requested, an instance a person removed and its replacement); the packages are
	// uploaded once, by the first revision.
	want = want.add(extra)
	accepted := s.acceptedRequests()
	got := changeCounts{accepted[createNSRoute], accepted[upgradeRoute], accepted[deleteNSRoute]}
	s.g.Expect(got).To(Equal(want), "revision %d (%s): changes OSM accepted\n%s", i, fault, s.describe(s.deployment))
	uploads := int64(0)
	if i == 0 {
		uploads = 2
	}
	s.g.Expect(changesAccepted(accepted)-got.creates-got.upgrades-got.deletes).To(Equal(uploads), "revision %d (%s): other changes", i, fault)
	s.changes = s.changes.add(got)
	s.requests += s.sim.Stats().Requests
	s.declared = declared
}

// inject publishes the revision's files with the fault, and returns the revision and the
// changes the fault adds to those of the revision. created and changed are the NS instances the
// revision creates and upgrades.
func (s *soak) inject(fault soakFault, files map[string]string, created, changed []string) (string, changeCounts) {
	target := soakTargets[s.rng.IntN(len(soakTargets))]
	switch fault {
	case faultServerErrors:
		status := []int{http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable}[s.rng.IntN(3)]
		s.addFault(nbisim.Fault{Method: target.method, PathPrefix: target.pathPrefix, Status: status, Count: 1 + s.rng.IntN(3)})
	case faultTimeout:
		s.addFault(nbisim.Fault{Method: target.method, PathPrefix: target.pathPrefix, Latency: soakSlow, Count: 1})
	case faultReset:
		s.addFault(nbisim.Fault{Method: target.method, PathPrefix: target.pathPrefix, Reset: true, Count: 1 + s.rng.IntN(3)})
	case faultLatency:
		s.addFault(nbisim.Fault{Latency: 100 * time.Millisecond, Rate: 0.3})
	case faultTokenRevoked:
		revision := s.publish("gitops", files)
		s.sim.RevokeTokens()
		s.g.Eventually(func() string { return s.get(s.deployment).Status.LastAttemptedRevision }).Should(Equal(revision))
		s.sim.RevokeTokens()
		return revision, changeCounts{}
	case faultOperationFailed:
		name := s.pick(created, changed)
		return s.failOperation(files, name, slices.Contains(created, name))
	case faultDeletedWhileRunning:
		return s.deleteWhileRunning(files, s.pick(created, changed))
	}
	return s.publish("gitops", files), changeCounts{}
}

// pick draws one of the NS instances the revision creates or upgrades.
func (s *soak) pick(created, changed []string) string {
	candidates := append(slices.Clone(created), changed...)
	return candidates[s.rng.IntN(len(candidates))]
}

// failOperation makes the instantiate (when created) or upgrade of the NS instance name fail,
// waits for the operator to report it, and recovers as a person would: a failed upgrade is
// retried on request; an instance whose instantiation failed is removed from OSM first.
func (s *soak) failOperation(files map[string]string, name string, created bool) (string, changeCounts) {
	operation, kind, extra := "upgrade", "action", changeCounts{upgrades: 1}
	if created {
		operation, kind, extra = "instantiate", "instantiate", changeCounts{creates: 1, deletes: 1}
	}
	state := []string{"FAILED", "FAILED_TEMP"}[s.rng.IntN(2)]
	message := fmt.Sprintf("soak: %s of %s failed", operation, name)
	s.g.Expect(s.sim.FailOperations(nbisim.OperationFailure{Operation: operation, NSName: name, State: state, Message: message, Count: 1})).To(Succeed())
	revision := s.publish("gitops", files)
	s.eventuallyCondition(s.deployment, meta.StalledCondition, Equal(fmt.Sprintf("True %s: NS instance %s: %s operation %s: %s",
		gitopsv1alpha1.OperationFailedReason, name, kind, state, message)))
	if created {
		s.forceDelete(name)
	}
	requestReconcile(s.tenant, s.deployment, fmt.Sprintf("soak-retry-%d", s.step))
	return revision, extra
}

// deleteWhileRunning removes the NS instance name from OSM while its operation of the revision
// runs; the operator must make it again, at the latest at its next drift check.
func (s *soak) deleteWhileRunning(files map[string]string, name string) (string, changeCounts) {
	revision := s.publishHeld(s.deployment, files)
	deleted := s.forceDelete(name)
	s.sim.ReleaseOperations()
	s.eventuallyRecreated(s.deployment, name, deleted)
	return revision, changeCounts{creates: 1, deletes: 1}
}

// faultedRequests counts the requests since the stats were reset that a fault broke: answered
// with a 5xx, reset, or outlasting the client's timeout.
func (s *soak) faultedRequests() int {
	n := 0
	for _, r := range s.sim.RequestLog() {
		if r.Status == 0 || r.Status >= http.StatusInternalServerError || r.Duration >= soakTimeout {
			n++
		}
	}
	return n
}

// changesAccepted counts the accepted requests that change OSM: neither reads nor sessions.
func changesAccepted(accepted map[string]int64) int64 {
	var n int64
	for route, count := range accepted {
		if !strings.HasPrefix(route, http.MethodGet+" ") && !strings.Contains(route, " /osm/admin/v1/tokens") {
			n += count
		}
	}
	return n
}

// demoRepoOf is the demo repository's packages with one NS instance per name of declared, each
// with its replicaCount.
func demoRepoOf(declared map[string]string) map[string]string {
	files := demoRepo("")
	for name, replicas := range declared {
		files["deploy/"+name+".osmops.yaml"] = nsInstanceFile(name, replicas)
	}
	return files
}
