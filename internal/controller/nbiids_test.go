package controller

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"

	"github.com/fluxcd/pkg/apis/meta"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
)

// idRewritingNBI forwards every request to the simulator and, once hostile is set, rewrites its
// 2xx answers to one method and path with rewrite, counting them.
type idRewritingNBI struct {
	next         http.Handler
	method, path string
	rewrite      func(genuine []byte) []byte
	hostile      atomic.Bool
	rewritten    atomic.Int64
}

func (n *idRewritingNBI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !n.hostile.Load() || r.Method != n.method || r.URL.Path != n.path {
		n.next.ServeHTTP(w, r)
		return
	}
	genuine := httptest.NewRecorder()
	n.next.ServeHTTP(genuine, r)
	body := genuine.Body.Bytes()
	if genuine.Code >= 200 && genuine.Code < 300 {
		n.rewritten.Add(1)
		body = n.rewrite(body)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(genuine.Code)
	_, _ = w.Write(body)
}

// withIDs returns a rewrite that sets the fields named of the JSON object answered, or of
// every record of the list answered, to value.
func withIDs(value string, fields ...string) func([]byte) []byte {
	return func(genuine []byte) []byte {
		var records []map[string]any
		list := json.Unmarshal(genuine, &records) == nil
		if !list {
			var answer map[string]any
			if err := json.Unmarshal(genuine, &answer); err != nil {
				panic(err)
			}
			records = []map[string]any{answer}
		}
		for _, record := range records {
			for _, field := range fields {
				record[field] = value
			}
		}
		var rewritten []byte
		var err error
		if list {
			rewritten, err = json.Marshal(records)
		} else {
			rewritten, err = json.Marshal(records[0])
		}
		if err != nil {
			panic(err)
		}
		return rewritten
	}
}

// statusHoldsNoLongID fails when a status field of d holds an id longer than an OSM id may be.
func (tn *tenant) statusHoldsNoLongID(d *gitopsv1alpha1.OsmDeployment) {
	tn.t.Helper()
	status := tn.get(d).Status
	var ids []string
	if status.Inventory != nil {
		for _, entry := range status.Inventory.NsInstances {
			ids = append(ids, entry.ID)
		}
		for _, entry := range status.Inventory.Packages {
			ids = append(ids, entry.ID)
		}
	}
	for _, op := range status.Operations {
		ids = append(ids, op.ID, op.State)
	}
	for _, snapshot := range status.History {
		for _, op := range snapshot.Operations {
			ids = append(ids, op.ID, op.State)
		}
	}
	for _, id := range ids {
		tn.g.Expect(len(id)).To(BeNumerically("<=", 64), "an id of %d bytes in the status", len(id))
	}
}

var _ = Describe("NBI ids out of range", func() {
	// front stands for the tenant's NBI, which rewrites the answers to one route of the
	// simulator once hostile; the OsmDeployment applies the demo repository through it.
	setUp := func(tn *tenant, name, method, path string, rewrite func([]byte) []byte) (*idRewritingNBI, *gitopsv1alpha1.OsmDeployment) {
		front := &idRewritingNBI{next: tn.sim, method: method, path: path, rewrite: rewrite}
		server := httptest.NewServer(front)
		tn.t.Cleanup(server.Close)
		cluster := tn.newCluster("front", server.URL, "osm-credentials")
		tn.clusterReason(cluster, metav1.ConditionTrue, gitopsv1alpha1.ConnectedReason)
		d := tn.deployment(name, "gitops", func(d *gitopsv1alpha1.OsmDeployment) { d.Spec.ClusterRef.Name = "front" })
		return front, d
	}

	It("an NS instance list whose _id is 100 KiB is refused: the status is written and Ready says why", func() {
		tn := newTenant(GinkgoTB())
		front, d := setUp(tn, "long-ids", http.MethodGet, nsInstancesPath, withIDs(strings.Repeat("a", 100<<10), "_id"))
		applied := tn.eventuallyApplied(d, tn.publish("gitops", demoRepo("1", "ldap")))
		id := applied.Status.Inventory.NsInstances[0].ID

		front.hostile.Store(true)
		tn.sim.ResetStats()
		requestReconcile(tn, d, "hostile")
		// Before, the id went into status.inventory[].id as it came: with enough instances, past
		// what the API server stores of an object, and every status write failed.
		tn.g.Eventually(func() string { return tn.condition(d, meta.ReadyCondition) }).Should(And(
			HavePrefix("False "+gitopsv1alpha1.OSMRequestFailedReason+": "),
			ContainSubstring("the 200 answer is not the JSON expected: item 1: its _id is not an id: 102400 bytes, more than 64")),
			func() string { return tn.describe(d) })
		tn.g.Expect(front.rewritten.Load()).To(BeNumerically(">=", 1))
		tn.g.Expect(tn.get(d).Status.Inventory.NsInstances[0].ID).To(Equal(id))
		tn.statusHoldsNoLongID(d)
		tn.g.Expect(tn.mutatingRequests()).To(BeZero(), "changes sent to OSM")
	})

	It("an NS create answered with an id of 60 KiB is refused: the status is written and Ready says why", func() {
		tn := newTenant(GinkgoTB())
		// Within the 64 KiB of a small answer: the id's bound refuses it, not the answer's.
		long := strings.Repeat("b", 60<<10)
		front, d := setUp(tn, "long-create-id", http.MethodPost, nsInstancesPath, withIDs(long, "id"))
		front.hostile.Store(true)
		revision := tn.publish("gitops", demoRepo("1", "ldap"))
		refusal := fmt.Sprintf("the 201 answer is not the JSON expected: its id is not an id: %d bytes, more than 64", len(long))
		tn.g.Eventually(func() string { return tn.condition(d, meta.ReadyCondition) }).Should(And(
			HavePrefix("False "), ContainSubstring(refusal)), func() string { return tn.describe(d) })
		tn.g.Expect(front.rewritten.Load()).To(BeEquivalentTo(1))
		tn.statusHoldsNoLongID(d)
		for _, e := range recorder.of(d.Namespace, d.Name) {
			tn.g.Expect(e.Message).NotTo(ContainSubstring(long[:65]), "event %s", e.Reason)
		}
		// OSM made the instance all the same: the next apply finds it by its owner's marker, under
		// the id OSM lists, rather than creating it twice.
		requestReconcile(tn, d, "after-the-refusal")
		applied := tn.eventuallyApplied(d, revision)
		tn.g.Expect(tn.instances("ldap")).To(HaveLen(1))
		tn.g.Expect(applied.Status.Inventory.NsInstances[0].ID).To(Equal(tn.instances("ldap")[0].ID))
		tn.g.Expect(front.rewritten.Load()).To(BeEquivalentTo(1))
		tn.statusHoldsNoLongID(d)
	})
})
