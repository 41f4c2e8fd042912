package controller

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/engine"
	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/nbisim"
	"github.com/osmops/osmops/internal/testing/osmtenant"
)

// fakeArtifacts stands for source-controller's storage: it counts the artifacts fetched.
type fakeArtifacts struct {
	mu      sync.Mutex
	files   map[string]string
	fetches int
	// fail, when not nil, is every fetch's error.
	fail error
	// gate, when not nil, holds every fetch until it is closed.
	gate chan struct{}
}

func (f *fakeArtifacts) fetch(ctx context.Context, _, _, dir string) error {
	f.mu.Lock()
	f.fetches++
	files, fail, gate := f.files, f.fail, f.gate
	f.mu.Unlock()
	if gate != nil {
		<-gate
	}
	if fail != nil {
		return fail
	}
	for name, content := range files {
		file := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func (f *fakeArtifacts) fetched() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fetches
}

func (f *fakeArtifacts) set(edit func(*fakeArtifacts)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	edit(f)
}

func newTestCache() (*revisionCache, *fakeArtifacts) {
	artifacts := &fakeArtifacts{files: demoRepo("1", "ldap")}
	return &revisionCache{fetch: artifacts.fetch}, artifacts
}

func user(name string) types.NamespacedName {
	return types.NamespacedName{Namespace: "tenant", Name: name}
}

// keyOf is the key of a revision read with the options named name.
func keyOf(name string) revisionKey { return revisionKey{digest: "sha256:1", options: name} }

func mustLoad(t testing.TB, c *revisionCache, who string, key revisionKey) (*gitops.Revision, bool) {
	t.Helper()
	rev, joined, err := c.load(t.Context(), user(who), key, "http://artifacts/1.tar.gz", gitops.Options{})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return rev, joined
}

// uploads is a plan that uploads every package of rev.
func uploads(rev *gitops.Revision) *engine.Plan {
	plan := &engine.Plan{}
	for _, p := range rev.Packages {
		plan.Packages = append(plan.Packages, engine.PackageAction{Package: p})
	}
	return plan
}

// tarballBytes counts the bytes of the package tarballs the cache holds, however it holds them:
// every byte slice its entries reach whose SHA-256 is the digest of one of their packages.
func (c *revisionCache) tarballBytes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	digests := map[string]bool{}
	for _, e := range c.entries {
		if e.revision != nil {
			for _, p := range e.revision.Packages {
				digests[p.Digest] = true
			}
		}
	}
	seen := map[uintptr]bool{}
	var walk func(v reflect.Value) int
	walk = func(v reflect.Value) int {
		n := 0
		switch v.Kind() {
		case reflect.Pointer:
			if !v.IsNil() && !seen[v.Pointer()] {
				seen[v.Pointer()] = true
				n = walk(v.Elem())
			}
		case reflect.Interface:
			if !v.IsNil() {
				n = walk(v.Elem())
			}
		case reflect.Slice:
			if v.Type().Elem().Kind() == reflect.Uint8 {
				if digests[fmt.Sprintf("sha256:%x", sha256.Sum256(v.Bytes()))] {
					n = v.Len()
				}
				break
			}
			for i := range v.Len() {
				n += walk(v.Index(i))
			}
		case reflect.Map:
			for it := v.MapRange(); it.Next(); {
				n += walk(it.Key()) + walk(it.Value())
			}
		case reflect.Struct:
			for _, field := range v.Fields() {
				n += walk(field)
			}
		}
		return n
	}
	return walk(reflect.ValueOf(c.entries))
}

func (c *revisionCache) size() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// concurrently runs reconcile(0) to reconcile(n-1) at once, closes gate (when not nil) once they
// are started, and waits for them.
func concurrently(n int, reconcile func(i int), gate chan struct{}) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			reconcile(i)
		})
	}
	if gate != nil {
		close(gate)
	}
	wg.Wait()
}

// expectUploadable checks that every upload of plan carries the bytes its digest names.
func expectUploadable(g *WithT, plan *engine.Plan) {
	for _, action := range plan.Packages {
		g.Expect(fmt.Sprintf("sha256:%x", sha256.Sum256(action.Package.Tarball))).To(Equal(action.Package.Digest), action.Package.Source)
	}
}

// expectNoBytes checks that the shared revision's packages hold no tarball.
func expectNoBytes(g *WithT, rev *gitops.Revision) {
	g.Expect(rev.Packages).To(HaveLen(2))
	for _, p := range rev.Packages {
		g.Expect(p.Tarball).To(BeNil(), p.Source)
	}
}

var _ = Describe("The revision cache", func() {
	It("shares one revision among its users", func() {
		t := GinkgoTB()
		g := NewWithT(t)
		c, artifacts := newTestCache()
		first, joined := mustLoad(t, c, "a", keyOf("default"))
		g.Expect(joined).To(BeTrue())
		second, joined := mustLoad(t, c, "b", keyOf("default"))
		g.Expect(joined).To(BeTrue())
		g.Expect(second).To(BeIdenticalTo(first))
		again, joined := mustLoad(t, c, "a", keyOf("default"))
		g.Expect(joined).To(BeFalse(), "a used it already: its warnings are no news")
		g.Expect(again).To(BeIdenticalTo(first))
		g.Expect(artifacts.fetched()).To(Equal(1))

		other, _ := mustLoad(t, c, "c", keyOf("other options"))
		g.Expect(other).NotTo(BeIdenticalTo(first))
		g.Expect(artifacts.fetched()).To(Equal(2))
		g.Expect(c.size()).To(Equal(2))
	})

	It("drops an entry with its last user", func() {
		t := GinkgoTB()
		g := NewWithT(t)
		c, artifacts := newTestCache()
		first, _ := mustLoad(t, c, "a", keyOf("1"))
		mustLoad(t, c, "b", keyOf("1"))
		second, _ := mustLoad(t, c, "a", keyOf("2")) // a moves to another revision
		g.Expect(c.size()).To(Equal(2))
		lastOfA, _ := c.last(user("a"))
		lastOfB, _ := c.last(user("b"))
		g.Expect(lastOfA).To(BeIdenticalTo(second))
		g.Expect(lastOfB).To(BeIdenticalTo(first))

		c.forget(user("b")) // deleted
		g.Expect(c.size()).To(Equal(1))
		_, cached := c.last(user("b"))
		g.Expect(cached).To(BeFalse())
		mustLoad(t, c, "c", keyOf("1"))
		g.Expect(artifacts.fetched()).To(Equal(3), "the entry of 1 went with b")

		// However many revisions one OsmDeployment goes through, it holds one entry.
		c.forget(user("c"))
		for i := range 5 {
			mustLoad(t, c, "a", keyOf(fmt.Sprint("push ", i)))
		}
		g.Expect(c.size()).To(Equal(1))
		c.forget(user("a"))
		g.Expect(c.size()).To(BeZero())
	})

	It("reads once for concurrent reconciles", func() {
		t := GinkgoTB()
		g := NewWithT(t)
		c, artifacts := newTestCache()
		gate := make(chan struct{})
		artifacts.set(func(f *fakeArtifacts) { f.gate = gate })
		revisions := make([]*gitops.Revision, 8)
		concurrently(len(revisions), func(i int) {
			rev, joined, err := c.load(context.Background(), user(fmt.Sprint(i)), keyOf("1"), "http://artifacts/1.tar.gz", gitops.Options{})
			if err != nil || !joined {
				t.Errorf("load %d: joined %t, %v", i, joined, err)
			}
			revisions[i] = rev
		}, gate)
		g.Expect(artifacts.fetched()).To(Equal(1))
		for _, rev := range revisions {
			g.Expect(rev).To(BeIdenticalTo(revisions[0]))
		}
	})

	It("keeps no failure", func() {
		t := GinkgoTB()
		g := NewWithT(t)
		c, artifacts := newTestCache()
		unreachable := errors.New("source-controller unreachable")
		gate := make(chan struct{})
		artifacts.set(func(f *fakeArtifacts) { f.fail, f.gate = unreachable, gate })
		errs := make([]error, 4)
		concurrently(len(errs), func(i int) {
			_, _, errs[i] = c.load(context.Background(), user(fmt.Sprint(i)), keyOf("1"), "http://artifacts/1.tar.gz", gitops.Options{})
		}, gate)
		for _, err := range errs {
			g.Expect(err).To(MatchError(unreachable), "every waiter gets the failure")
		}
		g.Expect(c.size()).To(BeZero())

		artifacts.set(func(f *fakeArtifacts) { f.fail = nil })
		fetched := artifacts.fetched()
		rev, _ := mustLoad(t, c, "0", keyOf("1"))
		g.Expect(rev.NsInstances).To(HaveLen(1))
		g.Expect(artifacts.fetched()).To(Equal(fetched + 1))
	})

	// An invalid revision is kept like a valid one: reading it again finds the same problems.
	It("keeps an invalid revision", func() {
		t := GinkgoTB()
		g := NewWithT(t)
		c, artifacts := newTestCache()
		artifacts.set(func(f *fakeArtifacts) {
			f.files = merge(f.files, map[string]string{"deploy/bad.osmops.yaml": "kind: NsInstance\nname: [\n"})
		})
		var invalid *gitops.ValidationError
		for _, who := range []string{"a", "b", "a"} {
			rev, _, err := c.load(t.Context(), user(who), keyOf("1"), "http://artifacts/1.tar.gz", gitops.Options{})
			g.Expect(rev).To(BeNil())
			g.Expect(errors.As(err, &invalid)).To(BeTrue(), "%v", err)
			g.Expect(err.Error()).To(ContainSubstring("deploy/bad.osmops.yaml"))
		}
		g.Expect(artifacts.fetched()).To(Equal(1))
		_, valid := c.last(user("a"))
		g.Expect(valid).To(BeFalse())
		g.Expect(c.withTarballs(t.Context(), user("a"), &engine.Plan{})).To(MatchError(ContainSubstring("no valid revision")))
	})

	// The cache keeps no tarball: an upload builds its package from the artifact, fetched again,
	// and a plan that uploads nothing fetches nothing.
	It("builds tarballs for the uploads of a plan", func() {
		t := GinkgoTB()
		g := NewWithT(t)
		c, artifacts := newTestCache()
		rev, _ := mustLoad(t, c, "a", keyOf("1"))
		mustLoad(t, c, "b", keyOf("1"))
		expectNoBytes(g, rev)
		g.Expect(c.tarballBytes()).To(BeZero())

		plan := uploads(rev)
		g.Expect(c.withTarballs(t.Context(), user("a"), plan)).To(Succeed())
		expectUploadable(g, plan)
		expectNoBytes(g, rev)
		g.Expect(artifacts.fetched()).To(Equal(2), "built again from the artifact")
		g.Expect(c.tarballBytes()).To(BeZero(), "the plan holds them, not the cache")

		// A drift check finds a package changed in the OSM of b: only the upload gets bytes.
		plan = &engine.Plan{Packages: []engine.PackageAction{{Package: rev.Packages[0], ID: "vnfd-1"}, {Package: rev.Packages[1], MarkOnly: true}}}
		g.Expect(c.withTarballs(t.Context(), user("b"), plan)).To(Succeed())
		g.Expect(artifacts.fetched()).To(Equal(3))
		expectUploadable(g, &engine.Plan{Packages: plan.Packages[:1]})
		g.Expect(plan.Packages[1].Package.Tarball).To(BeNil(), "a mark sends no bytes")
		expectNoBytes(g, rev)

		marks := &engine.Plan{Packages: []engine.PackageAction{{Package: rev.Packages[1], MarkOnly: true}}}
		g.Expect(c.withTarballs(t.Context(), user("b"), marks)).To(Succeed())
		g.Expect(artifacts.fetched()).To(Equal(3), "nothing to upload, nothing fetched")
	})

	// OsmDeployments whose OSM never lets a plan run (it fails the descriptor list, say) pin no
	// tarball, however many they are: each holds its revision, not its packages' bytes.
	It("holds no tarball for plans that never run", func() {
		t := GinkgoTB()
		g := NewWithT(t)
		c, _ := newTestCache()
		for i := range 8 {
			rev, _ := mustLoad(t, c, fmt.Sprint(i), keyOf(fmt.Sprint("options ", i)))
			g.Expect(rev.Packages).NotTo(BeEmpty())
		}
		g.Expect(c.size()).To(Equal(8))
		g.Expect(c.tarballBytes()).To(BeZero())
	})

	// The bytes built again are those validated, or none: an artifact of the same digest that
	// builds other packages is refused.
	It("refuses packages that build otherwise", func() {
		t := GinkgoTB()
		g := NewWithT(t)
		c, artifacts := newTestCache()
		rev, _ := mustLoad(t, c, "a", keyOf("1"))
		artifacts.set(func(f *fakeArtifacts) {
			f.files = merge(f.files, map[string]string{"osm-pkgs/openldap_knf/README.md": "other content\n"})
		})
		plan := uploads(rev)
		g.Expect(c.withTarballs(t.Context(), user("a"), plan)).To(MatchError(ContainSubstring("osm-pkgs/openldap_knf builds to")))
		for _, action := range plan.Packages {
			g.Expect(action.Package.Tarball).To(BeNil(), "never an upload of other or empty content")
		}
	})

	// OsmDeployments of one revision reconciled at once (run with -race): each upload has its
	// bytes, and the shared revision is never changed.
	It("serves concurrent reconciles", func() {
		t := GinkgoTB()
		g := NewWithT(t)
		c, artifacts := newTestCache()
		key := keyOf("1")
		const reconciles = 8
		plans := make([]*engine.Plan, reconciles)
		concurrently(reconciles, func(i int) {
			who := user(fmt.Sprint(i))
			rev, _, err := c.load(context.Background(), who, key, "http://artifacts/1.tar.gz", gitops.Options{})
			if err != nil {
				t.Errorf("load: %v", err)
				return
			}
			plans[i] = uploads(rev)
			if err := c.withTarballs(context.Background(), who, plans[i]); err != nil {
				t.Errorf("withTarballs: %v", err)
			}
		}, nil)
		for _, plan := range plans {
			expectUploadable(g, plan)
		}
		rev, _ := c.last(user("0"))
		expectNoBytes(g, rev)
		g.Expect(c.tarballBytes()).To(BeZero())
		// The builds of reconciles that need them at the same moment are one: at most one fetch
		// each, besides the load.
		g.Expect(artifacts.fetched()).To(BeNumerically("<=", reconciles+1))
	})

	// Two OsmDeployments of one GitRepository, on two OSMs, are Ready with one parse of its
	// artifact. The packages' bytes are kept by no one: each plan that uploads (and a drift check
	// that must upload one again, changed in OSM by hand) builds them from the artifact, and OSM
	// gets the bytes of Git.
	It("one revision serves two OSMs and packages are built again for drift", Label("slow"), func() {
		t := GinkgoTB()
		tn := newTenant(t)
		otherSim, otherNBI := tn.anotherNBI()
		other := tn.newCluster("other", otherNBI.URL, osmtenant.SecretName)
		// Ready before on-other exists: its readiness is no event that reconciles on-other again.
		tn.g.Expect(osmtenant.WaitClusterReady(tn.ctx, k8sClient, other, time.Minute)).To(Succeed())
		// The other OSM refuses package uploads at first: its OsmDeployment uses the revision
		// first, and still lacks the packages when the first OSM has them.
		tn.g.Expect(otherSim.AddFault(nbisim.Fault{Method: http.MethodPost, PathPrefix: "/osm/vnfpkgm/v1/vnf_packages_content",
			Status: http.StatusUnprocessableEntity})).To(Succeed())
		// Files of this test's own: a revision of the same digest that another test's OsmDeployment
		// uses would be shared, with no download.
		files := merge(demoRepo("1", "ldap"), map[string]string{"NOTES.txt": tn.namespace})
		artifact := artifacts.PublishFiles(tn.namespace+"/gitops", files)
		tn.setArtifact("gitops", artifact)
		onOther := tn.deployment("on-other", "gitops", func(d *gitopsv1alpha1.OsmDeployment) {
			d.Spec.ClusterRef.Name = "other"
			// Its retry comes from the reconcile request below, not from a retry interval that a
			// slow machine lets run out first (a second refused upload, one more build).
			d.Spec.RetryInterval = &metav1.Duration{Duration: time.Hour}
		})
		tn.eventuallyCondition(onOther, meta.ReadyCondition, HavePrefix("False "+gitopsv1alpha1.OSMRequestFailedReason))

		here := tn.deployment("here", "gitops", func(d *gitopsv1alpha1.OsmDeployment) {
			d.Spec.Interval = &metav1.Duration{Duration: time.Second}
		})
		tn.eventuallyApplied(here, artifact.Revision)
		otherSim.ClearFaults()
		requestReconcile(tn, onOther, "retry")
		tn.eventuallyApplied(onOther, artifact.Revision)
		// Each reconcile of on-other under the fault (the event that created it, and maybe one
		// of its source's or OsmCluster's seen late) refuses one upload plan: each built once.
		refused := refusedUploads(otherSim)
		tn.g.Expect(refused).To(BeNumerically(">=", 1))
		tn.g.Expect(artifacts.Downloads(artifact.Path)).To(Equal(3+refused),
			"one to read the revision for both; one for each plan that uploads: on-other's %d refused, here's, on-other's again", refused)

		downloads := artifacts.Downloads(artifact.Path)
		inGit := tn.packageState("openldap_knf").TarballDigest
		tn.changeKNFByHand()
		tn.g.Eventually(func() int { return tn.packageRevision("openldap_knf") }).Should(Equal(3), func() string { return tn.describe(here) })
		tn.g.Expect(tn.packageState("openldap_knf").TarballDigest).To(Equal(inGit))
		tn.g.Expect(artifacts.Downloads(artifact.Path)).To(Equal(downloads+1), "the bytes were built again")
		tn.eventuallyApplied(here, artifact.Revision)
	})

	// Every option a revision is read with enters its key: changing any field of gitops.Options or
	// of its substitution, at any depth, gives another key, and so do the values that print alike
	// (fileExtensions [".ns .osm"] and [".ns", ".osm"], two invalid UTF-8 strings, nil and empty).
	// The fields are found by reflection: one added to the options is tried at once, and one of a
	// kind this test cannot vary fails it.
	It("revision key holds every option", func() {
		t := GinkgoTB()
		base := func() gitops.Options {
			return gitops.Options{Path: "deploy", FileExtensions: []string{".ns", ".osm"}, PackagesPath: "pkgs",
				Substitution: &gitops.Substitution{Vars: map[string]string{"a": "1"}, FromSecret: map[string]bool{"a": true},
					DigestKey: []byte{1}, Strict: false}}
		}
		variants := map[reflect.Type][]any{
			reflect.TypeFor[string](): {"", "other", "\xff", "\xfe"},
			reflect.TypeFor[bool]():   {true, false},
			reflect.TypeFor[int]():    {0, 1, -1},
			reflect.TypeFor[int64]():  {int64(0), int64(1), int64(-1)},
			reflect.TypeFor[[]string](): {nil, []string{}, []string{".ns .osm"}, []string{".ns", ".osm", ""}, []string{".osm", ".ns"},
				[]string{"\xff"}, []string{"\xfe"}},
			reflect.TypeFor[[]byte]():            {nil, []byte{}, []byte{2}, []byte{1, 0}},
			reflect.TypeFor[map[string]string](): {nil, map[string]string{}, map[string]string{"a": "2"}, map[string]string{"a": "1", "b": ""}, map[string]string{"\xff": "1"}},
			reflect.TypeFor[map[string]bool]():   {nil, map[string]bool{}, map[string]bool{"a": false}, map[string]bool{"b": true}},
		}
		seen := map[revisionKey]string{newRevisionKey("sha256:1", base()): "the base options"}
		distinct := func(what string, opts gitops.Options) {
			key := newRevisionKey("sha256:1", opts)
			if other, ok := seen[key]; ok {
				t.Errorf("%s has the key of %s", what, other)
			}
			seen[key] = what
		}
		var vary func(path string, index []int, typ reflect.Type)
		vary = func(path string, index []int, typ reflect.Type) {
			for i := range typ.NumField() {
				field := typ.Field(i)
				name, at := path+field.Name, append(slices.Clone(index), i)
				if !field.IsExported() {
					t.Errorf("%s is not exported: newRevisionKey's encoding skips it", name)
					continue
				}
				setter := func(value reflect.Value) gitops.Options {
					opts := base()
					v := reflect.ValueOf(&opts).Elem()
					for _, j := range at[:len(at)-1] {
						v = v.Field(j).Elem() // a pointer to a struct
					}
					v.Field(at[len(at)-1]).Set(value)
					return opts
				}
				if field.Type.Kind() == reflect.Pointer && field.Type.Elem().Kind() == reflect.Struct {
					distinct(name+" nil", setter(reflect.Zero(field.Type)))
					vary(name+".", at, field.Type.Elem())
					continue
				}
				values, ok := variants[field.Type]
				if !ok {
					t.Errorf("%s is a %s, which this test cannot vary: add its values", name, field.Type)
					continue
				}
				current := reflect.ValueOf(base()).FieldByIndex(at[:1])
				for _, j := range at[1:] {
					current = current.Elem().Field(j)
				}
				for _, value := range values {
					v := reflect.ValueOf(value)
					if value == nil { // a nil slice or map
						v = reflect.Zero(field.Type)
					}
					if !reflect.DeepEqual(v.Interface(), current.Interface()) {
						distinct(fmt.Sprintf("%s %#v", name, v.Interface()), setter(v))
					}
				}
			}
		}
		vary("", nil, reflect.TypeFor[gitops.Options]())
		if len(seen) < 30 {
			t.Errorf("only %d options tried", len(seen))
		}
		if other := newRevisionKey("sha256:2", base()); seen[other] != "" {
			t.Error("two artifacts share a key")
		}
		for key := range seen {
			if strings.Contains(key.String(), "other") {
				t.Errorf("key %q holds an option in clear", key)
			}
		}
	})
})

// refusedUploads counts the package uploads sim refused (422): one per reconcile whose plan
// uploads while the fault lasts.
func refusedUploads(sim *nbisim.Server) int {
	return int(countAnswered(sim, http.MethodPost+" /osm/vnfpkgm/v1/vnf_packages_content", http.StatusUnprocessableEntity))
}
