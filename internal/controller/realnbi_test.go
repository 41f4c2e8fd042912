package controller

import (
	"cmp"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
)

// realNBIEnv names a running NBI of OSM's own code (see docs/fidelity.md), with admin/admin
// in project admin and a fresh database. The replay below runs only when it is set: CI cannot
// run OSM's NBI.
const realNBIEnv = "OSMOPS_REAL_NBI_URL"

// requestLog is a reverse proxy in front of the real NBI that counts what the operator sends.
type requestLog struct {
	mu      sync.Mutex
	entries []string // "METHOD path?query STATUS"
}

func (l *requestLog) proxy(t testing.TB, target string) *httptest.Server {
	upstream, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: upstream.Scheme, Host: upstream.Host})
	proxy.ModifyResponse = func(r *http.Response) error {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.entries = append(l.entries, fmt.Sprintf("%s %s %d", r.Request.Method, r.Request.URL.RequestURI(), r.StatusCode))
		return nil
	}
	server := httptest.NewServer(proxy)
	t.Cleanup(server.Close)
	return server
}

// count counts the requests whose "METHOD path?query STATUS" matches pattern.
func (l *requestLog) count(pattern string) int {
	re := regexp.MustCompile(pattern)
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, e := range l.entries {
		if re.MatchString(e) {
			n++
		}
	}
	return n
}

// ids are the OSM ids (UUIDs) and tokens in paths, replaced in the summary.
var ids = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9]{10}\.[0-9]+|[A-Za-z0-9]{32}`)

// summary counts the requests by method, path shape and status.
func (l *requestLog) summary() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	counts := map[string]int{}
	for _, e := range l.entries {
		counts[ids.ReplaceAllString(e, "{id}")]++
	}
	lines := make([]string, 0, len(counts))
	for shape, n := range counts {
		lines = append(lines, fmt.Sprintf("%5d  %s", n, shape))
	}
	slices.SortFunc(lines, func(a, b string) int { return cmp.Compare(a[7:], b[7:]) })
	return strings.Join(lines, "\n")
}

// readDemoRepo reads the demo repository of hack/demo-repo.
func readDemoRepo(t testing.TB) map[string]string {
	files := map[string]string{}
	root := filepath.Join("..", "..", "hack", "demo-repo")
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".yaml" {
			return err
		}
		data, err := os.ReadFile(path)
		rel, _ := filepath.Rel(root, path)
		files[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

var _ = Describe("A real NBI", Label("real-nbi"), func() {
	// The replay the demo repository's life against OSM's own NBI code: first
	// revision, a value change, a new instance, a package change with a new software-version, a
	// prune, one KDU of the NS of two KNFs changed, a chart version change, a broken file and its
	// fix. Each step ends Ready, and drift checks repeat no upgrade.
	It("applies the demo repository's whole life, each step Ready, drift checks repeating nothing", func() {
		t := GinkgoTB()
		tn, log, cluster, d := realNBITenant(t, realNBITarget(t), "admin", "admin")
		tn.clusterReason(cluster, metav1.ConditionTrue, gitopsv1alpha1.ConnectedReason)
		const driftInterval = 3 * time.Second
		tn.update(d, func(d *gitopsv1alpha1.OsmDeployment) { d.Spec.Interval = &metav1.Duration{Duration: driftInterval} })
		files := readDemoRepo(t)
		const ldap, ldap2, vnfd = "deploy/ldap.osmops.yaml", "deploy/ldap2.osmops.yaml", "osm-pkgs/openldap_knf/openldap_vnfd.yaml"
		const stack = "deploy/ldap-stack.osmops.yaml"
		step := func(name string, edit func()) {
			t.Logf("step: %s", name)
			edit()
			tn.eventuallyApplied(d, tn.publish("demo", files))
		}
		step("first revision", func() {})
		step("a value change", func() { files[ldap] = strings.Replace(files[ldap], `replicaCount: "1"`, `replicaCount: "2"`, 1) })
		step("a new instance", func() {
			files[ldap2] = strings.Replace(strings.Replace(files[ldap], "name: ldap", "name: ldap2", 1), "description: Demo LDAP NS", "description: Second LDAP", 1)
		})
		step("a package change with a new software-version", func() {
			files[vnfd] = strings.Replace(files[vnfd], "  version:", "  software-version: \"1.1\"\n  version:", 1)
			files[vnfd] = strings.Replace(files[vnfd], "description: ", "description: Changed ", 1)
		})
		step("a prune", func() { delete(files, ldap2) })
		step("one KDU of the NS of two KNFs changed", func() {
			files[stack] = strings.Replace(files[stack], "interval: 30s", "interval: 10s", 1)
		})
		// OSM's LCM moves a KDU to the repository's newest chart on an upgrade that names none
		// (1.2.8 here): the upgrade of a values-only change names the chart and version it runs.
		step("a value of the KDU pinned to chart 1.2.7 changed", func() {
			files[stack] = strings.Replace(files[stack], "        params:\n          replicaCount: \"1\"", "        params:\n          replicaCount: \"2\"", 1)
		})
		step("a chart version change", func() {
			files[stack] = strings.Replace(files[stack], "stable/openldap:1.2.7", "stable/openldap:1.2.8", 1)
		})

		t.Log("step: a broken file")
		mutating := func() int { return log.count(`^(POST|PUT|PATCH|DELETE) /osm/(nslcm|nsd|vnfpkgm)/`) }
		before := mutating()
		broken := tn.publish("demo", merge(files, map[string]string{"deploy/broken.osmops.yaml": "kind: NsInstance\nname: [oops\n"}))
		tn.eventuallyCondition(d, meta.ReadyCondition, HavePrefix("False "+gitopsv1alpha1.ValidationFailedReason))
		tn.g.Expect(tn.get(d).Status.LastAttemptedRevision).To(Equal(broken))
		tn.g.Expect(mutating()).To(Equal(before), "changing requests for a broken revision")
		step("the broken file removed", func() {})

		t.Log("step: three drift intervals")
		upgrades := log.count(`^POST /osm/nslcm/v1/ns_instances/[^/]+/action `)
		checks := func() int { return log.count(`^GET /osm/nslcm/v1/ns_lcm_op_occs\?.*lcmOperationType=action`) }
		seen := checks()
		tn.g.Eventually(checks, 10*driftInterval).Should(BeNumerically(">=", seen+3))
		tn.g.Expect(log.count(`^POST /osm/nslcm/v1/ns_instances/[^/]+/action `)).To(Equal(upgrades), "KDU upgrades during drift checks")
		tn.g.Expect(tn.condition(d, meta.ReadyCondition)).To(HavePrefix("True"))

		// OSM's NBI accepts a terminate of a busy NS and LCM queues it: the NS record says nothing
		// of it until LCM starts it, so a deletion must follow the terminates it sent, not send one
		// more at every poll.
		t.Log("step: the OsmDeployment deleted while OSM runs a KDU upgrade")
		tn.update(d, func(d *gitopsv1alpha1.OsmDeployment) { d.Spec.DeletionPolicy = gitopsv1alpha1.DeletionPolicyDelete })
		// A terminate is a DELETE that OSM accepted as an operation (202). Once it completed, OSM
		// keeps the NOT_INSTANTIATED record for a moment before its autoremove: nothing more is
		// sent to it (no DELETE with FORCE).
		terminates := func() int { return log.count(`^DELETE /osm/nslcm/v1/ns_instances_content/[^?]+ 202$`) }
		terminatesBefore, owned := terminates(), len(tn.get(d).Status.Inventory.NsInstances)
		files[ldap] = strings.Replace(files[ldap], `replicaCount: "2"`, `replicaCount: "3"`, 1)
		tn.publish("demo", files)
		tn.g.Eventually(func() int { return log.count(`^POST /osm/nslcm/v1/ns_instances/[^/]+/action `) }).Should(Equal(upgrades + 1))
		tn.deleteAll(d)
		tn.eventuallyGone(d)
		tn.g.Expect(terminates()-terminatesBefore).To(Equal(owned), "one terminate per owned NS instance")
		tn.g.Expect(log.count(`^DELETE /osm/nslcm/v1/ns_instances_content/[^ ]+FORCE`)).To(BeZero(), "forced DELETEs")
		t.Logf("requests to the real NBI, by shape:\n%s", log.summary())
	})
})
