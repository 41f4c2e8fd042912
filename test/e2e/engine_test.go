//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fluxcd/pkg/apis/meta"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/nbisim"
)

// The product scenarios: Git commits applied to OSM by the OsmDeployment engine. Each test
// has its own namespace, repository, OsmCluster and simulator, so that its request counts and
// OSM state are its own.

// Routes of the simulator's request counters that the scenarios count.
const (
	tokensRoute       = "/osm/admin/v1/tokens"
	nsActionRoute     = "/osm/nslcm/v1/ns_instances/{nsInstanceId}/action"
	vnfPkgUpdateRoute = "/osm/vnfpkgm/v1/vnf_packages/{vnfPkgId}/package_content"
	vnfPkgRoute       = "/osm/vnfpkgm/v1/vnf_packages/{vnfPkgId}"
)

// The demo repository's NS instance and packages.
const (
	ldapInstanceName = "ldap"
	ldapKDU          = "ldap"
	ldapFile         = "deploy/ldap.osmops.yaml"
	knfPackage       = "openldap_knf"
	nsPackage        = "openldap_ns"
	knfDescriptor    = "osm-pkgs/openldap_knf/openldap_vnfd.yaml"
)

var _ = Describe("Applying a Git repository to OSM", func() {
	It("creates the packages and the NS instance of the first commit", func() {
		t := GinkgoTB()
		ctx, tenant, g := bootstrap(t)

		state := tenant.state(ctx, g)
		g.Expect(packageKinds(state)).To(Equal(map[string]string{knfPackage: "vnf", nsPackage: "ns"}))
		g.Expect(state.NSInstances).To(HaveLen(1))
		g.Expect(state.NSInstances[0].Name).To(Equal(ldapInstanceName))
		g.Expect(state.NSInstances[0].NSState).To(Equal("READY"))
		g.Expect(kduParams(state, ldapInstanceName)).To(Equal(map[string]any{"replicaCount": "1"}))

		deployment, err := tenant.deployment(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(deployment.Status.NsInstancesSummary).To(Equal("1/1"))
	})

	It("upgrades only the KDU whose value changed", func() {
		t := GinkgoTB()
		ctx, tenant, g := bootstrap(t)
		g.Expect(tenant.sim.ResetStats(ctx)).To(Succeed())

		tenant.commitAndExpectApplied(ctx, t, map[string]string{ldapFile: ldapInstance(ldapInstanceName, "2")})

		stats := tenant.stats(ctx, g)
		g.Expect(requestsTo(stats, http.MethodPost, nsActionRoute)).To(BeEquivalentTo(1), "one KDU upgrade")
		g.Expect(changes(stats)).To(BeEquivalentTo(1), "nothing but the upgrade")
		state := tenant.state(ctx, g)
		g.Expect(kduParams(state, ldapInstanceName)).To(Equal(map[string]any{"replicaCount": "2"}))
		g.Expect(upgrades(state, ldapInstanceName)).To(Equal(1))
	})

	It("restores the earlier values on a revert", func() {
		t := GinkgoTB()
		ctx, tenant, g := bootstrap(t)
		changed := tenant.commitAndExpectApplied(ctx, t, map[string]string{ldapFile: ldapInstance(ldapInstanceName, "3")})

		reverted, err := tenant.repo.Revert(changed)
		g.Expect(err).NotTo(HaveOccurred())
		tenant.expectApplied(ctx, t, reverted)

		state := tenant.state(ctx, g)
		g.Expect(kduParams(state, ldapInstanceName)).To(Equal(map[string]any{"replicaCount": "1"}))
	})

	It("updates a package whose files changed", func() {
		t := GinkgoTB()
		ctx, tenant, g := bootstrap(t)
		before := tenant.state(ctx, g)
		g.Expect(tenant.sim.ResetStats(ctx)).To(Succeed())
		descriptor, err := os.ReadFile(filepath.Join(demoRepoDir(), knfDescriptor))
		g.Expect(err).NotTo(HaveOccurred())

		tenant.commitAndExpectApplied(ctx, t, map[string]string{
			knfDescriptor: string(descriptor) + "# a change of the package, not of its instances\n",
		})

		stats := tenant.stats(ctx, g)
		g.Expect(requestsTo(stats, http.MethodPut, vnfPkgUpdateRoute)).To(BeEquivalentTo(1), "one package update")
		g.Expect(requestsTo(stats, http.MethodPatch, vnfPkgRoute)).To(BeEquivalentTo(1), "the mark of what it uploaded")
		g.Expect(changes(stats)).To(BeEquivalentTo(2), "nothing but the package update and its mark")
		after := tenant.state(ctx, g)
		g.Expect(packageRevisions(after)).To(Equal(map[string]int{
			knfPackage: packageRevisions(before)[knfPackage] + 1,
			nsPackage:  packageRevisions(before)[nsPackage],
		}))
		g.Expect(kduParams(after, ldapInstanceName)).To(Equal(kduParams(before, ldapInstanceName)))
	})

	It("stalls on an invalid file and recovers when it is fixed", func() {
		t := GinkgoTB()
		ctx, tenant, g := bootstrap(t)
		g.Expect(tenant.sim.ResetStats(ctx)).To(Succeed())

		// kdu.name is missing: the whole revision is invalid.
		broken, err := tenant.repo.Commit(map[string]string{"deploy/second.osmops.yaml": `kind: NsInstance
name: ldap2
nsdName: openldap_ns
vnfName: openldap
vimAccountName: ` + vimAccount + `
kdu:
  params:
    replicaCount: "1"
`}, "Add a broken NS instance")
		g.Expect(err).NotTo(HaveOccurred())
		// Polled: source-controller and the operator take the commit in their own time.
		g.Eventually(func(g Gomega) {
			deployment, err := tenant.deployment(ctx)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(deployment.Status.LastAttemptedRevision).To(Equal(revision(broken)))
			stalled := apimeta.FindStatusCondition(deployment.Status.Conditions, meta.StalledCondition)
			g.Expect(stalled).NotTo(BeNil(), "not Stalled")
			g.Expect(stalled.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(stalled.Reason).To(Equal(gitopsv1alpha1.ValidationFailedReason))
			g.Expect(stalled.Message).To(MatchRegexp(`deploy/second\.osmops\.yaml:\d+`))
			g.Expect(deployment.Status.LastAppliedRevision).To(Equal(revision(tenant.seeded)))
		}).WithContext(ctx).WithTimeout(eventuallyTimeout).WithPolling(pollInterval).Should(Succeed())
		stats := tenant.stats(ctx, g)
		g.Expect(changes(stats)).To(BeZero(), "OSM must be left untouched")

		tenant.commitAndExpectApplied(ctx, t, map[string]string{"deploy/second.osmops.yaml": ldapInstance("ldap2", "1")})
		state := tenant.state(ctx, g)
		g.Expect(kduParams(state, "ldap2")).To(Equal(map[string]any{"replicaCount": "1"}))
	})
})

// bootstrap makes a tenant with a simulator of its own and waits until the operator has applied the demo repository (the
// commit tenant.seeded). It returns the test's context and tenant, and a Gomega for the test.
func bootstrap(t testing.TB) (context.Context, *testTenant, *WithT) {
	t.Helper()
	ctx := testContext(t)
	tenant := newTenant(ctx, t, true)
	tenant.expectApplied(ctx, t, tenant.seeded)
	return ctx, tenant, NewWithT(t)
}

// state returns the state dump of the tenant's simulator.
func (tt *testTenant) state(ctx context.Context, g Gomega) nbisim.State {
	state, err := tt.sim.State(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	return state
}

// stats returns the request counters of the tenant's simulator.
func (tt *testTenant) stats(ctx context.Context, g *WithT) nbisim.Stats {
	stats, err := tt.sim.Stats(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	return stats
}

// commitAndExpectApplied commits files and waits until the operator has applied the commit.
func (tt *testTenant) commitAndExpectApplied(ctx context.Context, t testing.TB, files map[string]string) string {
	t.Helper()
	sha, err := tt.repo.Commit(files, t.Name())
	if err != nil {
		t.Fatal(err)
	}
	tt.expectApplied(ctx, t, sha)
	return sha
}

// expectApplied waits until the OsmDeployment is Ready with the commit sha applied.
func (tt *testTenant) expectApplied(ctx context.Context, t testing.TB, sha string) {
	t.Helper()
	tt.expectRevisionApplied(ctx, t, revision(sha))
}

// expectRevisionApplied waits (polls, bounded: the operator applies asynchronously) until the
// OsmDeployment is Ready with the source revision applied.
func (tt *testTenant) expectRevisionApplied(ctx context.Context, t testing.TB, rev string) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		deployment, err := tt.deployment(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(deployment.Status.LastAppliedRevision).To(Equal(rev))
		g.Expect(apimeta.IsStatusConditionTrue(deployment.Status.Conditions, meta.ReadyCondition)).To(BeTrue(), "not Ready")
	}).WithContext(ctx).WithTimeout(eventuallyTimeout).WithPolling(pollInterval).Should(Succeed())
}

// requestsTo counts the requests of one method and route template, whatever their status.
func requestsTo(stats nbisim.Stats, method, route string) int64 {
	var n int64
	for _, endpoint := range stats.Endpoints {
		if endpoint.Method == method && endpoint.Route == route {
			n += endpoint.Requests
		}
	}
	return n
}

// changes counts the requests that change OSM: the mutating ones, less logging in and out.
func changes(stats nbisim.Stats) int64 {
	var n int64
	for _, endpoint := range stats.Endpoints {
		if endpoint.Method != http.MethodGet && !strings.HasPrefix(endpoint.Route, tokensRoute) {
			n += endpoint.Requests
		}
	}
	return n
}

// packageKinds maps each package's descriptor id to its kind.
func packageKinds(state nbisim.State) map[string]string {
	kinds := map[string]string{}
	for _, p := range state.Packages {
		kinds[p.DescriptorID] = p.Kind
	}
	return kinds
}

// packageRevisions maps each package's descriptor id to its revision.
func packageRevisions(state nbisim.State) map[string]int {
	revisions := map[string]int{}
	for _, p := range state.Packages {
		revisions[p.DescriptorID] = p.Revision
	}
	return revisions
}

// kduParams returns the values of the demo's KDU in the NS instance name, nil if there is none.
func kduParams(state nbisim.State, name string) map[string]any {
	for _, ns := range state.NSInstances {
		for _, kdu := range ns.KDUs {
			if ns.Name == name && kdu.Name == ldapKDU {
				return releaseValues(kdu)
			}
		}
	}
	return nil
}

// releaseValues returns the values a KDU's Helm release runs with.
func releaseValues(kdu nbisim.KDUState) map[string]any {
	var params map[string]any
	if err := json.Unmarshal(kdu.Params, &params); err != nil {
		panic(fmt.Sprintf("the simulator's state holds values that are not a JSON object: %v", err))
	}
	return params
}

// upgrades counts the completed KDU upgrades of the NS instance name.
func upgrades(state nbisim.State, name string) int {
	n := 0
	for _, ns := range state.NSInstances {
		for _, op := range ns.Operations {
			if ns.Name == name && op.Type == "action" && op.Primitive == "upgrade" && op.State == "COMPLETED" {
				n++
			}
		}
	}
	return n
}
