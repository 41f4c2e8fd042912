package cli

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/engine"
	"github.com/osmops/osmops/internal/gitops"
)

// lines joins lines with a newline after each, as the renderers print them.
func lines(text ...string) string { return strings.Join(text, "\n") + "\n" }

func TestRenderValidation(t *testing.T) {
	for _, test := range []struct {
		name string
		in   Validation
		want string
	}{
		{"valid, offline", Validation{Dir: "repo", ReferencePackages: 1, ReferencePackagesDir: "osm-pkgs",
			Revision: &gitops.Revision{NsInstances: make([]gitops.NsInstance, 2), Packages: make([]gitops.Package, 1)}},
			lines("✔ repo is valid: 2 NS instances, 1 package (offline: vnf-profiles and KDUs checked against the repository's 1 package in osm-pkgs)")},
		{"problems and warnings, against OSM", Validation{Dir: ".", OSM: "https://osm:9999",
			Problems: []gitops.Problem{{File: "a.osmops.yaml", Line: 3, Message: `unknown field "parms"`}, {Message: "spec.path: bad"}},
			Warnings: []string{"osm_ops_config.yaml:2: unknown field \"x\" is ignored"}},
			lines(`✗ a.osmops.yaml:3: unknown field "parms"`, "✗ spec.path: bad",
				`! osm_ops_config.yaml:2: unknown field "x" is ignored`,
				".: 2 problems (references checked against OSM https://osm:9999)")},
	} {
		t.Run(test.name, func(t *testing.T) {
			var out strings.Builder
			RenderValidation(&out, test.in)
			if diff := cmp.Diff(test.want, out.String()); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRenderDiffAndItsExitStatus(t *testing.T) {
	for _, test := range []struct {
		name     string
		in       DiffReport
		want     string
		wantExit int
	}{
		{"no change", DiffReport{Dir: ".", OSM: "http://osm", Project: "admin", Deployment: "telco/gitops"},
			lines("Plan of . against OSM http://osm (project admin), as OsmDeployment telco/gitops", "", "✔ no change: OSM matches the revision"), ExitOK},
		{"every kind of change", DiffReport{Dir: "repo", OSM: "http://osm", Project: "admin",
			Packages: []PackageChange{
				{Verb: "create", Kind: "vnf", ID: "knf", Source: "osm-pkgs/knf", Reason: "new in Git"},
				{Verb: "update", Kind: "ns", ID: "ns", Source: "osm-pkgs/ns", Reason: "changed in Git"},
				{Verb: "mark", Kind: "vnf", ID: "old", Source: "osm-pkgs/old", Reason: "uploaded before"},
			},
			Creates: []InstanceChange{{Name: "new", Reason: "declared in Git", Target: "NSD ns on VIM account site1",
				KDUs: []KDUChange{{Member: "vnf", Name: "ldap", Values: []ValueChange{{Path: "adminPassword", New: "-", Masked: true}, {Path: "replicaCount", New: `"1"`}}}}}},
			Upgrades: []InstanceChange{{Name: "ldap", Reason: "KDU ldap of VNF vnf: values changed in Git",
				KDUs: []KDUChange{{Member: "vnf", Name: "ldap", OldChart: "stable/openldap:1.2.7", NewChart: "stable/openldap:1.2.8",
					Values: []ValueChange{{Path: "replicaCount", Old: `"1"`, New: `"2"`}}}}}},
			Moves:    []InstanceChange{{Name: "stack", Reason: "VNF web to package revision 2"}},
			Deletes:  []InstanceChange{{Name: "gone", Reason: "no longer declared in Git"}},
			Orphans:  []string{"left"},
			Warnings: []string{"osm-pkgs/ns: OSM may refuse the update"},
		}, lines(
			"Plan of repo against OSM http://osm (project admin), as a new OsmDeployment, which owns nothing yet (--osm: no owner)",
			"",
			"Packages:",
			"  + create vnf package knf (osm-pkgs/knf): new in Git",
			"  ~ update ns package ns (osm-pkgs/ns): changed in Git",
			"  * mark vnf package old (osm-pkgs/old): uploaded before",
			"",
			"NS instances to create:",
			"  + create new (NSD ns on VIM account site1): declared in Git",
			"      KDU ldap of VNF vnf:",
			"        + adminPassword: (from a Secret: not shown)",
			`        + replicaCount: "1"`,
			"",
			"KDUs to upgrade:",
			"  ~ upgrade ldap: KDU ldap of VNF vnf: values changed in Git",
			"      KDU ldap of VNF vnf:",
			"        ~ chart: stable/openldap:1.2.7 → stable/openldap:1.2.8",
			`        ~ replicaCount: "1" → "2"`,
			"",
			"VNFs to move to their package's new revision:",
			"  ~ move stack: VNF web to package revision 2",
			"",
			"NS instances to delete (prune):",
			"  - delete gone: no longer declared in Git",
			"",
			"Orphans (no longer declared, left running as prune is off):",
			"  ! left",
			"",
			"Warnings:",
			"  ! osm-pkgs/ns: OSM may refuse the update",
			"",
			"3 package uploads, 1 create, 1 upgrade, 1 package move, 1 delete, 1 orphan",
		), ExitFindings},
		{"problems", DiffReport{Dir: ".", OSM: "http://osm", Project: "admin", Problems: []gitops.Problem{{File: "a.osmops.yaml", Line: 4, Message: `vimAccountName "x" is not a VIM account of OSM`}}},
			lines("Plan of . against OSM http://osm (project admin), as a new OsmDeployment, which owns nothing yet (--osm: no owner)",
				"", "Problems (nothing would be applied):", `  ✗ a.osmops.yaml:4: vimAccountName "x" is not a VIM account of OSM`,
				"", "✗ 1 problem: the revision would be rejected"), ExitError},
		{"orphans alone change nothing", DiffReport{Dir: ".", OSM: "http://osm", Project: "admin", Deployment: "a/b", Orphans: []string{"left"}},
			lines("Plan of . against OSM http://osm (project admin), as OsmDeployment a/b", "",
				"Orphans (no longer declared, left running as prune is off):", "  ! left", "", "✔ no change: OSM matches the revision"), ExitOK},
		{"drift left in warn mode changes nothing", DiffReport{Dir: ".", OSM: "http://osm", Project: "admin", Deployment: "a/b",
			Drifts: []engine.Drift{{Name: "ldap", What: "deleted in OSM outside Git"}}},
			lines("Plan of . against OSM http://osm (project admin), as OsmDeployment a/b", "",
				"Changed in OSM outside Git, left as it is (driftDetection.mode warn):", "  ! ldap: deleted in OSM outside Git",
				"", "✔ no change to send: OSM differs from the revision only where drift is left as it is"), ExitOK},
	} {
		t.Run(test.name, func(t *testing.T) {
			var out strings.Builder
			RenderDiff(&out, test.in)
			if diff := cmp.Diff(test.want, out.String()); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			if got := exitStatus(test.in.exitError()); got != test.wantExit {
				t.Errorf("exit status %d, want %d", got, test.wantExit)
			}
		})
	}
}

// exitStatus is the status Execute gives err.
func exitStatus(err error) int {
	var exit *exitError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &exit):
		return exit.code
	}
	return ExitError
}

func TestRenderGet(t *testing.T) {
	ready := func(status metav1.ConditionStatus, message string) []metav1.Condition {
		return []metav1.Condition{{Type: meta.ReadyCondition, Status: status, Reason: "R", Message: message}}
	}
	items := []gitopsv1alpha1.OsmDeployment{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "telco", Name: "zeta"}, Spec: gitopsv1alpha1.OsmDeploymentSpec{Suspend: true}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "telco", Name: "alpha"}, Status: gitopsv1alpha1.OsmDeploymentStatus{
			Conditions: ready(metav1.ConditionTrue, "Applied revision:\nmain@sha1:abc"), LastAppliedRevisionShort: "main@sha1:abc",
			Inventory: &gitopsv1alpha1.Inventory{NsInstances: []gitopsv1alpha1.NsInstanceEntry{
				{Name: "ldap", State: gitopsv1alpha1.NsInstanceReady},
				{Name: "web", State: gitopsv1alpha1.NsInstanceFailed, Reason: "KDU failed"},
			}}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "edge", Name: "beta"}, Status: gitopsv1alpha1.OsmDeploymentStatus{Conditions: ready(metav1.ConditionFalse, "no OSM")}},
	}
	for _, test := range []struct {
		name          string
		allNamespaces bool
		want          string
	}{
		{"one namespace", false, lines(
			"NAME       REVISION       SUSPENDED  READY    MESSAGE",
			"beta       -              false      False    no OSM",
			"alpha      main@sha1:abc  false      True     Applied revision: main@sha1:abc",
			"  ns/ldap                            Ready    ",
			"  ns/web                             Failed   KDU failed",
			"zeta       -              true       Unknown  ",
		)},
		{"all namespaces", true, lines(
			"NAMESPACE  NAME       REVISION       SUSPENDED  READY    MESSAGE",
			"edge       beta       -              false      False    no OSM",
			"telco      alpha      main@sha1:abc  false      True     Applied revision: main@sha1:abc",
			"             ns/ldap                            Ready    ",
			"             ns/web                             Failed   KDU failed",
			"telco      zeta       -              true       Unknown  ",
		)},
	} {
		t.Run(test.name, func(t *testing.T) {
			var out strings.Builder
			RenderGet(&out, items, test.allNamespaces)
			if diff := cmp.Diff(test.want, out.String()); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRenderEvents(t *testing.T) {
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(ago time.Duration) metav1.Time { return metav1.NewTime(now.Add(-ago)) }
	object := corev1.ObjectReference{Kind: gitopsv1alpha1.OsmDeploymentKind, Name: "gitops"}
	events := []corev1.Event{
		{Type: corev1.EventTypeNormal, Reason: "Applied", Message: "revision main@sha1:b applied", InvolvedObject: object, LastTimestamp: at(10 * time.Second)},
		{Type: corev1.EventTypeWarning, Reason: "ValidationFailed", Message: "revision main@sha1:a rejected:\n2 problems", InvolvedObject: object,
			Series: &corev1.EventSeries{Count: 3, LastObservedTime: metav1.NewMicroTime(now.Add(-5 * time.Minute))}},
		{Type: corev1.EventTypeNormal, Reason: "Progressing", Message: "creating", InvolvedObject: object, EventTime: metav1.NewMicroTime(now.Add(-2 * time.Minute))},
	}
	var out strings.Builder
	RenderEvents(&out, events, now)
	want := lines(
		"LAST SEEN  TYPE     REASON            OBJECT                MESSAGE",
		"5m         Warning  ValidationFailed  OsmDeployment/gitops  revision main@sha1:a rejected: 2 problems",
		"2m         Normal   Progressing       OsmDeployment/gitops  creating",
		"10s        Normal   Applied           OsmDeployment/gitops  revision main@sha1:b applied",
	)
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}

// What OSM or Git put in a report (an instance id, a name, a reason, a problem) cannot act on
// the terminal: its control characters are escaped, so an id cannot rewrite the last line.
func TestRenderersEscapeControlCharacters(t *testing.T) {
	const hostile = "ns-1\x1b[2K\r\x1b[1A✔ no change\u202e\n✔ forged"
	var out strings.Builder
	RenderDiff(&out, DiffReport{Dir: "repo", OSM: "http://osm", Project: "admin",
		Deletes:  []InstanceChange{{Name: "ldap", Reason: "pruned: OSM id " + hostile}},
		Orphans:  []string{hostile},
		Warnings: []string{hostile}})
	RenderValidation(&out, Validation{Dir: ".", Problems: []gitops.Problem{{File: hostile, Message: hostile}}})
	RenderEvents(&out, []corev1.Event{{Type: "Warning", Reason: "Conflict", Message: hostile}}, time.Now())
	RenderGet(&out, []gitopsv1alpha1.OsmDeployment{{ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "n"},
		Status: gitopsv1alpha1.OsmDeploymentStatus{LastAppliedRevision: hostile}}}, false)
	for line := range strings.SplitSeq(out.String(), "\n") {
		if strings.ContainsFunc(line, func(r rune) bool { return r < ' ' || r == 0x7f || r == '\u202e' }) {
			t.Errorf("raw control character in %q", line)
		}
		if strings.HasPrefix(line, "✔ forged") {
			t.Errorf("a forged line: %q", line)
		}
	}
	if !strings.Contains(out.String(), `\x1b[2K\x0d`) {
		t.Errorf("the escapes are not shown:\n%s", out.String())
	}
}
