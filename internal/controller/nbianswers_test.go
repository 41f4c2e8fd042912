package controller

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/osm"
	"github.com/osmops/osmops/internal/testing/osmtenant"
)

// rewritingNBI forwards every request to the simulator, and rewrites its 200 answers to one
// route (a method and a path prefix), counting them.
type rewritingNBI struct {
	next           http.Handler
	method, prefix string
	rewrite        func(genuine []byte) []byte
	rewritten      atomic.Int64
}

func (n *rewritingNBI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != n.method || !strings.HasPrefix(r.URL.Path, n.prefix) {
		n.next.ServeHTTP(w, r)
		return
	}
	genuine := httptest.NewRecorder()
	n.next.ServeHTTP(genuine, r)
	body := genuine.Body.Bytes()
	if genuine.Code == http.StatusOK {
		n.rewritten.Add(1)
		body = n.rewrite(body)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(genuine.Code)
	_, _ = w.Write(body)
}

// withFields returns a rewrite that sets fields of the JSON object answered, by their path
// ("_admin.password_expire_time"); a string value is written as a JSON string, which OSM's
// numbers may be (osm.Number reads "NaN").
func withFields(fields map[string]any) func([]byte) []byte {
	return func(genuine []byte) []byte {
		var answer map[string]any
		if err := json.Unmarshal(genuine, &answer); err != nil {
			panic(err)
		}
		for path, value := range fields {
			object := answer
			keys := strings.Split(path, ".")
			for _, key := range keys[:len(keys)-1] {
				object = object[key].(map[string]any)
			}
			object[keys[len(keys)-1]] = value
		}
		rewritten, err := json.Marshal(answer)
		if err != nil {
			panic(err)
		}
		return rewritten
	}
}

// outOfRangeFields returns the fields of the out-of-range lines the suite's manager logged for
// the OsmCluster namespace/name.
func outOfRangeFields(namespace, name string) []string {
	var fields []string
	scanner := bufio.NewScanner(strings.NewReader(suiteLog.String()))
	scanner.Buffer(nil, 1<<20)
	for scanner.Scan() {
		var line map[string]any
		if json.Unmarshal(scanner.Bytes(), &line) == nil && line["msg"] == osm.OutOfRangeMessage &&
			line["namespace"] == namespace && line["name"] == name {
			fields = append(fields, fmt.Sprint(line["field"]))
		}
	}
	return fields
}

// hostileVIMAccounts answers as many VIM accounts as a status could not hold, each of a long
// name that holds a terminal escape.
func hostileVIMAccounts(n int) func([]byte) []byte {
	return func([]byte) []byte {
		var accounts []map[string]string
		for i := range n {
			accounts = append(accounts, map[string]string{"_id": fmt.Sprintf("vim-%d", i),
				"name": fmt.Sprintf("vim-%04d-\x1b[2K%s", i, strings.Repeat("v", 1000)), "vim_type": "openstack"})
		}
		var body bytes.Buffer
		_ = json.NewEncoder(&body).Encode(accounts)
		return body.Bytes()
	}
}

var _ = Describe("NBI answers out of range", func() {
	// front stands for the tenant's NBI, which rewrites one answer of the simulator; the
	// OsmCluster of the name front checks OSM through it.
	setUp := func(tn *tenant, method, prefix string, rewrite func([]byte) []byte) (*rewritingNBI, *gitopsv1alpha1.OsmCluster) {
		front := &rewritingNBI{next: tn.sim, method: method, prefix: prefix, rewrite: rewrite}
		server := httptest.NewServer(front)
		tn.t.Cleanup(server.Close)
		return front, tn.newCluster("front", server.URL, osmtenant.SecretName)
	}
	get := func(tn *tenant, cluster *gitopsv1alpha1.OsmCluster) *gitopsv1alpha1.OsmCluster {
		got := &gitopsv1alpha1.OsmCluster{}
		tn.g.Expect(k8sClient.Get(tn.ctx, client.ObjectKeyFromObject(cluster), got)).To(Succeed())
		return got
	}

	It("expiry times of the user record that are no time are dropped: the status is written, the record read once a check", func() {
		tn := newTenant(GinkgoTB())
		front, cluster := setUp(tn, http.MethodGet, "/osm/admin/v1/users/", withFields(map[string]any{
			"_admin.password_expire_time": "NaN", "_admin.account_expire_time": "Infinity"}))
		tn.clusterReason(cluster, metav1.ConditionTrue, gitopsv1alpha1.ConnectedReason)
		// Before, every status write was refused (NaN read as the year 292277026304, on amd64),
		// and every retry read the record again.
		tn.g.Consistently(front.rewritten.Load, time.Second).Should(BeEquivalentTo(1))
		tn.requestCheck(cluster, "check-1")
		tn.g.Expect(front.rewritten.Load()).To(BeEquivalentTo(2))
		got := get(tn, cluster)
		tn.g.Expect(got.Status.PasswordExpiresAt).To(BeNil())
		tn.g.Expect(got.Status.AccountExpiresAt).To(BeNil())
		tn.g.Expect(outOfRangeFields(tn.namespace, cluster.Name)).To(ConsistOf(
			"_admin.password_expire_time", "_admin.account_expire_time",
			"_admin.password_expire_time", "_admin.account_expire_time"))
	})

	It("an issued_at of a login that is no time is dropped: the token lives by the operator's clock, one login", func() {
		tn := newTenant(GinkgoTB())
		front, cluster := setUp(tn, http.MethodPost, "/osm/admin/v1/tokens", withFields(map[string]any{"issued_at": "NaN"}))
		tn.clusterReason(cluster, metav1.ConditionTrue, gitopsv1alpha1.ConnectedReason)
		// Before, the token's lifetime overflowed: every request logged in again.
		tn.requestCheck(cluster, "check-1")
		tn.g.Expect(front.rewritten.Load()).To(BeEquivalentTo(1))
		tn.g.Expect(outOfRangeFields(tn.namespace, cluster.Name)).To(ConsistOf("issued_at"))
	})

	It("a login whose expiry is no time is refused, said in the status, and not tried again", func() {
		tn := newTenant(GinkgoTB())
		front, cluster := setUp(tn, http.MethodPost, "/osm/admin/v1/tokens", withFields(map[string]any{"expires": "NaN"}))
		message := tn.clusterReason(cluster, metav1.ConditionFalse, gitopsv1alpha1.AuthenticationFailedReason)
		tn.g.Expect(message).To(ContainSubstring("the token answer has no expiry that is a time between 1970 and 9999"))
		tn.g.Consistently(front.rewritten.Load, time.Second).Should(BeEquivalentTo(1))
	})

	It("more VIM accounts than a status holds: the first 100 shown, escaped and cut, and every one counted", func() {
		tn := newTenant(GinkgoTB())
		const accounts = 3000 // 3 MB of names: more than the API server stores of an object
		front, cluster := setUp(tn, http.MethodGet, "/osm/admin/v1/vim_accounts", hostileVIMAccounts(accounts))
		message := tn.clusterReason(cluster, metav1.ConditionTrue, gitopsv1alpha1.ConnectedReason)
		tn.g.Expect(message).To(HaveSuffix(fmt.Sprintf("; %d VIM account(s)", accounts)))
		shown := get(tn, cluster).Status.VIMAccounts
		tn.g.Expect(shown).To(HaveLen(100))
		for _, name := range shown {
			tn.g.Expect(len(name)).To(BeNumerically("<=", 256))
			tn.g.Expect(name).To(HavePrefix(`vim-0`))
			tn.g.Expect(name).NotTo(ContainSubstring("\x1b"))
		}
		tn.g.Expect(shown[0]).To(HavePrefix(`vim-0000-\x1b[2Kvvv`))
		tn.g.Consistently(front.rewritten.Load, time.Second).Should(BeEquivalentTo(1))
	})
})
