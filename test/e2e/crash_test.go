//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apimeta "k8s.io/apimachinery/pkg/api/meta"

	"github.com/osmops/osmops/internal/nbisim"
	"github.com/osmops/osmops/internal/testing/devstack"
)

// Crash safety: the operator is killed (SIGKILL) at a random point while it applies a revision
// of crashInstances NS instances, then restarted, crashTrials times. Each trial replaces every
// NS instance of the previous one (prune on): crashInstances creates and as many deletes. After
// each restart the operator must converge with every NS instance made exactly once and its
// status telling the truth.
const (
	crashTrials    = 20
	crashInstances = 100
	// crashSeedEnv chooses the seed of the kill points (default 1).
	crashSeedEnv = "OSMOPS_CRASH_SEED"
	// crashTimeout bounds the whole test.
	crashTimeout = 10 * time.Minute
	// crashPollInterval makes the operator check OSM's operations often, and crashRequeue
	// soon find the connections it lost; crashOperationDelay makes the simulator finish its
	// operations soon; crashCreateLatency spreads the creates of a revision over a window a
	// kill can land in.
	crashPollInterval   = "--operation-poll-interval=200ms"
	crashRequeue        = "--requeue-dependency=500ms"
	crashOperationDelay = "100ms"
	crashCreateLatency  = 30 * time.Millisecond
	// The routes of the NS instance creates and deletes.
	crashCreateRoute = "/osm/nslcm/v1/ns_instances_content"
	crashDeleteRoute = crashCreateRoute + "/{nsInstanceContentId}"
)

var _ = Describe("An operator killed while it applies", func() {
	// Serial: it restarts the operator, so it must not run in parallel with other specs.
	It("converges with no duplicate when the operator is killed at any point of an apply", Serial, Label("slow"), func() {
		t := GinkgoTB()
		ctx, cancel := context.WithTimeout(context.Background(), crashTimeout)
		t.Cleanup(cancel)
		g := NewWithT(t)
		seed := uint64(1)
		if v := os.Getenv(crashSeedEnv); v != "" {
			parsed, err := strconv.ParseUint(v, 10, 64)
			g.Expect(err).NotTo(HaveOccurred(), crashSeedEnv)
			seed = parsed
		}
		rng := rand.New(rand.NewPCG(seed, seed))

		operator := stack.Operator()
		g.Expect(operator.RestartWith(ctx, crashPollInterval, crashRequeue)).To(Succeed())
		t.Cleanup(func() {
			if err := operator.RestartWith(ctx); err != nil {
				t.Errorf("restarting the operator with its own flags: %v", err)
			}
		})
		tenant := newTenant(ctx, t, true)
		g.Expect(setOperationDelay(ctx, tenant.sim, crashOperationDelay)).To(Succeed())
		g.Expect(tenant.sim.AddFault(ctx, nbisim.Fault{Method: http.MethodPost, PathPrefix: crashCreateRoute, Latency: crashCreateLatency})).To(Succeed())
		tenant.expectApplied(ctx, t, tenant.seeded)

		killedAfter := make([]int64, 0, crashTrials)
		started := time.Now()
		for trial := 1; trial <= crashTrials; trial++ {
			g.Expect(tenant.sim.ResetStats(ctx)).To(Succeed())
			files, names := crashRevision(trial)
			sha, err := tenant.repo.Commit(files, fmt.Sprintf("Crash trial %d", trial))
			g.Expect(err).NotTo(HaveOccurred())
			tenant.expectArtifact(ctx, t, sha)

			// Kill once OSM has accepted a random number of the revision's creates: from none
			// (the operator may not have read the revision yet) to all (it waits for OSM).
			killAt := int64(rng.IntN(crashInstances + 1))
			// Polled (finely, so the kill lands close to killAt): the operator sends the creates
			// on its own schedule.
			g.Eventually(func(g Gomega) {
				stats, err := tenant.sim.Stats(ctx)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(accepted(stats, http.MethodPost, crashCreateRoute)).To(BeNumerically(">=", killAt))
			}).WithContext(ctx).WithTimeout(eventuallyTimeout).WithPolling(10 * time.Millisecond).Should(Succeed())
			g.Expect(operator.Kill()).To(Succeed())
			killedAfter = append(killedAfter, accepted(tenant.stats(ctx, g), http.MethodPost, crashCreateRoute))
			g.Expect(operator.Restart(ctx)).To(Succeed())

			tenant.expectCrashConverged(ctx, t, sha, append(names, ldapInstanceName))
			// Each create and each delete reached OSM once, crash or not.
			stats := tenant.stats(ctx, g)
			g.Expect(accepted(stats, http.MethodPost, crashCreateRoute)).To(BeEquivalentTo(crashInstances), "trial %d: creates", trial)
			wantDeletes := int64(crashInstances)
			if trial == 1 {
				wantDeletes = 0 // the seeded NS instance stays
			}
			g.Expect(accepted(stats, http.MethodDelete, crashDeleteRoute)).To(BeEquivalentTo(wantDeletes), "trial %d: deletes", trial)
		}
		t.Logf("seed %d: %d trials of %d NS instances in %s; killed after %v creates accepted",
			seed, crashTrials, crashInstances, time.Since(started).Round(time.Second), killedAfter)
	})
})

// crashRevision is the revision of a trial: the demo repository's NS instance and
// crashInstances more, named after the trial. It returns the files to commit and the names.
func crashRevision(trial int) (map[string]string, []string) {
	files := map[string]string{}
	names := make([]string, 0, crashInstances)
	for i := range crashInstances {
		name := fmt.Sprintf("crash-%d-%03d", trial, i)
		files[fmt.Sprintf("deploy/crash/ns-%03d.osmops.yaml", i)] = ldapInstance(name, "1")
		names = append(names, name)
	}
	return files, names
}

// expectCrashConverged waits until the OsmDeployment has applied the commit sha, then checks
// that OSM runs each of names exactly once, READY, and nothing else, and that the inventory
// holds each one's id.
func (tt *testTenant) expectCrashConverged(ctx context.Context, t testing.TB, sha string, names []string) {
	t.Helper()
	eventually(ctx, t, func(g Gomega) {
		deployment, err := tt.deployment(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(deployment.Status.LastAppliedRevision).To(Equal(revision(sha)))
		g.Expect(apimeta.IsStatusConditionTrue(deployment.Status.Conditions, meta.ReadyCondition)).To(BeTrue(), "not Ready")
		g.Expect(deployment.Status.NsInstancesSummary).To(Equal(fmt.Sprintf("%d/%d", len(names), len(names))))
		inventory := map[string]string{}
		for _, entry := range deployment.Status.Inventory.NsInstances {
			inventory[entry.Name] = entry.ID
		}
		running := map[string]string{}
		state, err := tt.sim.State(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		for _, ns := range state.NSInstances {
			g.Expect(running).NotTo(HaveKey(ns.Name), "two NS instances named %s", ns.Name)
			g.Expect(ns.NSState).To(Equal("READY"), "NS instance %s", ns.Name)
			running[ns.Name] = ns.ID
		}
		g.Expect(running).To(HaveLen(len(names)))
		for _, name := range names {
			g.Expect(running).To(HaveKey(name))
		}
		g.Expect(inventory).To(Equal(running), "the inventory and OSM")
	})
}

// accepted counts the requests of one method and route that OSM accepted (a 2xx answer).
func accepted(stats nbisim.Stats, method, route string) int64 {
	var n int64
	for _, e := range stats.Endpoints {
		if e.Method == method && e.Route == route && e.Status/100 == 2 {
			n += e.Requests
		}
	}
	return n
}

// setOperationDelay changes how long the simulator's operations run, through its control API.
func setOperationDelay(ctx context.Context, sim *devstack.Simulator, delay string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPatch, sim.URL()+"/sim/v1/settings",
		bytes.NewReader([]byte(`{"operationDelay": "`+delay+`"}`)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("PATCH %s/sim/v1/settings: %s", sim.URL(), resp.Status)
	}
	return nil
}
