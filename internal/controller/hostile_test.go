package controller

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/fluxcd/pkg/apis/meta"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/nbisim"
	"github.com/osmops/osmops/internal/osm"
	"github.com/osmops/osmops/internal/testing/artifactserver"
)

// The hostile corpus: revisions, artifacts and NBI answers that are broken or malicious. Each
// case is a folder of testdata/hostile holding expected.txt, the OsmDeployment's Ready
// condition it must end in ("Status Reason: message", the revision written $REVISION), and,
// for a revision, the files it adds to the demo repository under repo/. Each must stall the
// OsmDeployment with that message, send OSM no change, and not crash the operator.
//
//	go test ./internal/controller -ginkgo.focus Hostile -update-hostile
//
// rewrites the expected.txt files from what the operator says.
var updateHostile = flag.Bool("update-hostile", false, "rewrite testdata/hostile/*/expected.txt")

// hostileDir is the corpus folder.
const hostileDir = "testdata/hostile"

// hostileRevisions are the cases whose revision is the demo repository plus some files: those
// of repo/ in the case's folder, or those files makes (too large or too repetitive to keep).
var hostileRevisions = []struct {
	name  string
	files func() map[string]string
}{
	{name: "malformed-yaml"},
	{name: "yaml-bomb"},
	{name: "huge-file", files: func() map[string]string {
		// One byte over the limit of a deployment file.
		return map[string]string{"deploy/huge.osmops.yaml": nsInstanceFile("huge", "1") + "#" + strings.Repeat("x", 1<<20)}
	}},
	{name: "unknown-kind"},
	{name: "missing-fields"},
	{name: "wrong-types"},
	{name: "params-not-a-map"},
	{name: "duplicate-names"},
	{name: "package-without-descriptor"},
	{name: "package-with-two-descriptors"},
	{name: "missing-vnfd"},
	{name: "dependency-cycle"},
}

// hostileArtifacts are the cases whose artifact is not a tarball source-controller would
// make: the demo repository's files, then a hostile entry (or a wrong digest).
var hostileArtifacts = []struct {
	name   string
	entry  *tar.Header
	digest string
}{
	{name: "tar-dotdot", entry: &tar.Header{Name: "deploy/../../escape.osmops.yaml", Typeflag: tar.TypeReg}},
	{name: "tar-absolute-path", entry: &tar.Header{Name: "/etc/cron.d/osmops", Typeflag: tar.TypeReg}},
	{name: "tar-symlink-out", entry: &tar.Header{Name: "deploy/etc", Typeflag: tar.TypeSymlink, Linkname: "../../../etc"}},
	{name: "tar-device", entry: &tar.Header{Name: "deploy/sda", Typeflag: tar.TypeBlock, Devmajor: 8}},
	{name: "tar-bomb", entry: &tar.Header{Name: "deploy/zeros.osmops.yaml", Typeflag: tar.TypeReg, Size: 600 << 20}},
	{name: "digest-mismatch", digest: "sha256:" + strings.Repeat("0", 64)},
}

var _ = Describe("Hostile revisions, artifacts and NBI answers", func() {
	// The cases share one tenant, each with an OsmDeployment and a source of its own.
	Context("hostile revisions", Ordered, ContinueOnFailure, func() {
		var tn *tenant
		BeforeAll(func() { tn = newTenant(GinkgoTB()) })
		AfterAll(func() {
			// Whatever the cases did, nothing reached OSM.
			tn.g.Expect(tn.mutatingRequests()).To(BeZero(), "changes sent to OSM")
		})
		for _, tc := range hostileRevisions {
			It(tc.name, func() {
				t := GinkgoTB()
				sub := tn.in(t)
				overlay := readTree(t, filepath.Join(hostileDir, tc.name, "repo"))
				if tc.files != nil {
					overlay = tc.files()
				}
				d := sub.deployment(tc.name, tc.name)
				revision := sub.publish(tc.name, merge(demoRepo("1", "ldap"), overlay))
				sub.expectHostileOutcome(d, tc.name, revision)
			})
		}
	})

	// The cases share one tenant, each with an OsmDeployment and a source of its own.
	Context("hostile artifacts", Ordered, ContinueOnFailure, func() {
		var tn *tenant
		BeforeAll(func() { tn = newTenant(GinkgoTB()) })
		AfterAll(func() { tn.g.Expect(tn.mutatingRequests()).To(BeZero(), "changes sent to OSM") })
		for _, tc := range hostileArtifacts {
			It(tc.name, func() {
				t := GinkgoTB()
				sub := tn.in(t)
				d := sub.deployment(tc.name, tc.name)
				tarball := hostileTarball(t, tc.entry)
				revision := sub.publishTarball(tc.name, tarball, tc.digest)
				sub.expectHostileOutcome(d, tc.name, revision, fmt.Sprintf("sha256:%x", sha256.Sum256(tarball)), "$DIGEST")
			})
		}
	})

	// Serial: under -race the client takes most of an NBI request timeout to read
	// nbi-fills-memory's answer, and the CPU of other specs made it miss the timeout.
	Context("hostile NBI answers", Serial, func() {
		for _, tc := range hostileNBIs {
			It(tc.name, func() {
				t := GinkgoTB()
				tn := newTenant(t)
				front := &hostileNBI{next: tn.sim, answer: tc.answer}
				server := httptest.NewServer(front)
				t.Cleanup(server.Close)
				cluster := tn.newCluster("front", server.URL, "osm-credentials")
				tn.clusterReason(cluster, metav1.ConditionTrue, gitopsv1alpha1.ConnectedReason)
				d := tn.deployment(tc.name, "gitops", func(d *gitopsv1alpha1.OsmDeployment) { d.Spec.ClusterRef.Name = "front" })
				revision := tn.publish("gitops", demoRepo("1", "ldap"))
				tn.eventuallyApplied(d, revision)

				front.hostile.Store(true)
				tn.sim.ResetStats()
				requestReconcile(tn, d, "hostile")
				tn.expectHostileOutcome(d, tc.name, revision)
				tn.g.Expect(tn.mutatingRequests()).To(BeZero(), "changes sent to OSM")
				tn.g.Expect(tn.instances("ldap")).To(HaveLen(1))
			})
		}
	})

	// An NBI whose message on a failed operation holds terminal escapes (erase the line, go up,
	// a forged verdict) reaches the tenant's conditions and events escaped: no raw control
	// character. (An id holding them is refused whole: "NBI ids out of range".)
	It("control characters from an NBI are escaped", func() {
		tn := newTenant(GinkgoTB())
		const hostile = "helm failed \x1b[2K\r\x1b[1A✔ no change\x07"
		tn.g.Expect(tn.sim.FailOperations(nbisim.OperationFailure{Operation: "instantiate", NSName: "ldap", Message: hostile})).To(Succeed())
		d := tn.deployment("escapes", "gitops")
		tn.publish("gitops", demoRepo("1", "ldap"))
		escaped := `helm failed \x1b[2K\x0d\x1b[1A✔ no change\x07`
		tn.g.Eventually(func() string { return tn.condition(d, meta.ReadyCondition) }).Should(
			ContainSubstring(escaped), func() string { return tn.describe(d) })
		raw := func(s string) bool { return strings.ContainsFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f }) }
		for _, c := range tn.get(d).Status.Conditions {
			tn.g.Expect(raw(c.Message)).To(BeFalse(), "condition %s: %q", c.Type, c.Message)
		}
		for _, e := range recorder.of(d.Namespace, d.Name) {
			tn.g.Expect(raw(e.Message)).To(BeFalse(), "event %s: %q", e.Reason, e.Message)
		}
	})
})

// hostileNBIs are the cases where the NBI answers the list of NS instances with something the
// operator cannot trust; before it does, the operator applies the demo repository through it.
var hostileNBIs = []struct {
	name   string
	answer func(w http.ResponseWriter, genuine []byte)
}{
	{name: "nbi-not-json", answer: func(w http.ResponseWriter, _ []byte) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html><body><h1>502 Bad Gateway</h1></body></html>\n"))
	}},
	{name: "nbi-huge-answer", answer: func(w http.ResponseWriter, _ []byte) {
		// Blanks are valid JSON: only the size is wrong.
		w.Header().Set("Content-Type", "application/json")
		blanks := bytes.Repeat([]byte(" "), 1<<20)
		_, _ = w.Write([]byte("["))
		for range osm.DefaultMaxResponseBytes/len(blanks) + 1 {
			if _, err := w.Write(blanks); err != nil {
				return
			}
		}
		_, _ = w.Write([]byte("]"))
	}},
	{name: "nbi-fills-memory", answer: func(w http.ResponseWriter, genuine []byte) {
		// Each record within its bound, the list far within 256 MiB, but made of fields the
		// operator keeps: 12 copies of the instance, each with a description of 3 MiB.
		var records []map[string]any
		if err := json.Unmarshal(genuine, &records); err != nil {
			panic(err)
		}
		var copies []map[string]any
		for _, r := range records {
			r["description"] = strings.Repeat("x", 3<<20)
			for range 12 {
				copies = append(copies, r)
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(copies)
	}},
	{name: "nbi-lacks-fields", answer: func(w http.ResponseWriter, genuine []byte) {
		// The records lose what identifies them: their _id and name.
		var records []map[string]any
		if err := json.Unmarshal(genuine, &records); err != nil {
			panic(err)
		}
		for _, r := range records {
			delete(r, "_id")
			delete(r, "name")
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(records)
	}},
}

// hostileNBI forwards every request to the simulator but the list of NS instances, which,
// once hostile is set, it answers with answer (given the simulator's genuine answer).
type hostileNBI struct {
	next    http.Handler
	answer  func(w http.ResponseWriter, genuine []byte)
	hostile atomic.Bool
}

func (h *hostileNBI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.hostile.Load() || r.Method != http.MethodGet || r.URL.Path != nsInstancesPath {
		h.next.ServeHTTP(w, r)
		return
	}
	genuine := httptest.NewRecorder()
	h.next.ServeHTTP(genuine, r)
	h.answer(w, genuine.Body.Bytes())
}

// expectHostileOutcome waits until d stalls with the Ready condition of the case's
// expected.txt (or rewrites it, with -update-hostile). The expected text writes the revision
// $REVISION, the URL of the tenant's artifacts $ARTIFACTS, and each of placeholders (pairs of
// a value and its name) by its name.
func (tn *tenant) expectHostileOutcome(d *gitopsv1alpha1.OsmDeployment, name, revision string, placeholders ...string) {
	tn.t.Helper()
	tn.g.Eventually(func() string { return tn.condition(d, meta.StalledCondition) }).Should(HavePrefix("True "), func() string { return tn.describe(d) })
	stalled := strings.TrimPrefix(tn.condition(d, meta.StalledCondition), "True ")
	tn.g.Expect(tn.condition(d, meta.ReadyCondition)).To(Equal("False " + stalled))
	placeholders = append(placeholders, revision, "$REVISION", artifacts.URL+"/"+tn.namespace, "$ARTIFACTS")
	got := strings.NewReplacer(placeholders...).Replace("False "+stalled) + "\n"
	path := filepath.Join(hostileDir, name, "expected.txt")
	if *updateHostile {
		tn.g.Expect(os.WriteFile(path, []byte(got), 0o644)).To(Succeed())
		return
	}
	want, err := os.ReadFile(path)
	tn.g.Expect(err).NotTo(HaveOccurred())
	tn.g.Expect(got).To(Equal(string(want)))
}

// readTree reads the files below root, by slash path relative to it.
func readTree(t testing.TB, root string) map[string]string {
	files := map[string]string{}
	err := filepath.WalkDir(root, func(path string, entry fs.DirEntry, err error) error {
		if err != nil || entry.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		files[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return files
}

// hostileTarball is the demo repository as source-controller packs it, then entry; a regular
// entry holds zeros of its declared size, in gzip members of their own, made once and repeated
// as a compression bomb is: 600 MiB of them take 600 KiB.
func hostileTarball(t testing.TB, entry *tar.Header) []byte {
	t.Helper()
	files := demoRepo("1", "ldap")
	if entry == nil {
		return artifactserver.TarGz(files)
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	var out bytes.Buffer
	gz := gzip.NewWriter(&out)
	tw := tar.NewWriter(gz)
	for _, name := range names {
		must(t, tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(files[name])), Typeflag: tar.TypeReg}))
		_, err := tw.Write([]byte(files[name]))
		must(t, err)
	}
	// archive/tar writes any name it is given: the reader is the one to refuse.
	must(t, tw.WriteHeader(entry))
	if entry.Size == 0 {
		must(t, tw.Close())
	}
	must(t, gz.Close())
	if entry.Size > 0 {
		var zeros bytes.Buffer
		gz := gzip.NewWriter(&zeros)
		_, err := gz.Write(make([]byte, 1<<20))
		must(t, err)
		must(t, gz.Close())
		// One MiB more than the entry: the end of the archive is zeros too.
		for range entry.Size>>20 + 1 {
			out.Write(zeros.Bytes())
		}
	}
	return out.Bytes()
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
