package v1alpha1_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource/tableconvertor"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/yaml"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/testing/testenv"
)

// maxRowWidth is the terminal width `kubectl get` and `kubectl get -o wide` must fit in.
const maxRowWidth = 120

// explainWidth is the width kubectl explain wraps a field's description at (its plaintext
// template: 78 columns less the field's indentation). It keeps the description's own line
// breaks, so a longer line is broken in the middle of a sentence.
const explainWidth = 76

func crdOf(t *testing.T, plural string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testenv.OsmopsCRDPath(), "gitops.osmops.io_"+plural+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, crd); err != nil {
		t.Fatal(err)
	}
	return crd
}

// render prints objects as `kubectl get` (or `-o wide`) does: the API server's table of the
// CRD's additionalPrinterColumns, through kubectl's table printer.
func render(t *testing.T, plural string, wide bool, objects ...runtime.Object) []string {
	t.Helper()
	convertor, err := tableconvertor.New(crdOf(t, plural).Spec.Versions[0].AdditionalPrinterColumns)
	if err != nil {
		t.Fatal(err)
	}
	list := &unstructured.UnstructuredList{}
	for _, obj := range objects {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			t.Fatal(err)
		}
		list.Items = append(list.Items, unstructured.Unstructured{Object: u})
	}
	table, err := convertor.ConvertToTable(context.Background(), list, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := printers.NewTablePrinter(printers.PrintOptions{Wide: wide}).PrintObj(table, &out); err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
}

func assertRowsFit(t *testing.T, rows []string) {
	t.Helper()
	for _, row := range rows {
		if width := len([]rune(row)); width > maxRowWidth {
			t.Errorf("row of %d characters, more than %d:\n%s", width, maxRowWidth, strings.Join(rows, "\n"))
		}
	}
}

const (
	gitRevision     = "main@sha1:3f1c0a2b9d8e7f60514a3b2c1d0e9f8a7b6c5d4e"
	gitRevisionNext = "main@sha1:9a8b7c6d5e4f30211203948576afbecd01234567"
	branchRevision  = "lab-east@sha1:3f1c0a2b9d8e7f60514a3b2c1d0e9f8a7b6c5d4e"
)

// deployment is an OsmDeployment as the operator leaves it, with long but realistic names
// (19 characters, an OsmCluster of 13), a dozen NS instances and the main branch: the most
// `kubectl get -o wide` fits in 120 characters.
func deployment(name string, ready metav1.ConditionStatus, reason, message string, mutate func(*gitopsv1alpha1.OsmDeployment)) *gitopsv1alpha1.OsmDeployment {
	d := &gitopsv1alpha1.OsmDeployment{
		TypeMeta: metav1.TypeMeta{APIVersion: gitopsv1alpha1.GroupVersion.String(), Kind: gitopsv1alpha1.OsmDeploymentKind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "tenant-a",
			CreationTimestamp: metav1.NewTime(time.Now().Add(-26 * time.Hour))},
		Spec: gitopsv1alpha1.OsmDeploymentSpec{
			SourceRef:  gitopsv1alpha1.SourceReference{Kind: "GitRepository", Name: "tenant-a-network-services"},
			ClusterRef: meta.LocalObjectReference{Name: "osm-prod-east"},
		},
		Status: gitopsv1alpha1.OsmDeploymentStatus{
			LastAppliedRevision: gitRevision, LastAttemptedRevision: gitRevision,
			NsInstancesReady: 12, NsInstancesTotal: 12, NsInstancesSummary: "12/12",
			Conditions: []metav1.Condition{{Type: meta.ReadyCondition, Status: ready, Reason: reason, Message: message}},
		},
	}
	if mutate != nil {
		mutate(d)
	}
	d.Status.LastAppliedRevisionShort = gitopsv1alpha1.ShortRevision(d.Status.LastAppliedRevision)
	d.Status.LastAttemptedRevisionShort = gitopsv1alpha1.ShortRevision(d.Status.LastAttemptedRevision)
	return d
}

func TestOsmDeploymentColumnsFit(t *testing.T) {
	objects := []runtime.Object{
		deployment("openldap-production", metav1.ConditionTrue, gitopsv1alpha1.AppliedReason, "Applied revision: "+gitRevision, nil),
		deployment("openldap-production", metav1.ConditionFalse, gitopsv1alpha1.ValidationFailedReason,
			"revision "+gitRevisionNext+" rejected, nothing applied: deploy/ldap.osmops.yaml:12: kdu.params: a map is expected; "+
				"deploy/ldap2.osmops.yaml:3: vimAccountName: no VIM account named lab-east in OSM", func(d *gitopsv1alpha1.OsmDeployment) {
				d.Status.LastAttemptedRevision = gitRevisionNext
			}),
		deployment("openldap-staging-01", metav1.ConditionFalse, gitopsv1alpha1.DependencyNotReadyReason,
			"waiting for OsmDeployment openldap-production: not Ready", func(d *gitopsv1alpha1.OsmDeployment) {
				d.Status.LastAttemptedRevision = gitRevisionNext
				d.Spec.Suspend = true
			}),
		deployment("openldap-region-eu1", metav1.ConditionFalse, gitopsv1alpha1.WaitingForWaveReason,
			"waiting for OsmDeployment openldap-canary: Ready on revision main@9a8b7c6 since 2026-11-26T03:40:15Z, bake time 2h0m0s: 1h12m4s left",
			func(d *gitopsv1alpha1.OsmDeployment) {
				d.Status.Rollout = &gitopsv1alpha1.RolloutStatus{Revision: gitRevisionNext, Dependency: "openldap-canary", Phase: gitopsv1alpha1.RolloutBaking}
			}),
		deployment("openldap-region-us1", metav1.ConditionFalse, gitopsv1alpha1.RolloutHaltedReason,
			"rollout of main@9a8b7c6 halted by OsmDeployment openldap-canary: it failed revision main@9a8b7c6", func(d *gitopsv1alpha1.OsmDeployment) {
				d.Status.Rollout = &gitopsv1alpha1.RolloutStatus{Revision: gitRevisionNext, Dependency: "openldap-canary", Phase: gitopsv1alpha1.RolloutHalted}
			}),
	}
	for _, wide := range []bool{false, true} {
		rows := render(t, "osmdeployments", wide, objects...)
		assertRowsFit(t, rows)
		t.Logf("wide=%v:\n%s", wide, strings.Join(rows, "\n"))
	}
	wide := render(t, "osmdeployments", true, objects...)
	for _, want := range []string{"CLUSTER", "ATTEMPTED", "SUSPENDED", "osm-prod-east", "main@9a8b7c6", "true"} {
		if !strings.Contains(strings.Join(wide, "\n"), want) {
			t.Errorf("-o wide lacks %q:\n%s", want, strings.Join(wide, "\n"))
		}
	}
	// A site held by a wave, one halted by a dependency that failed the revision, and one that
	// failed it itself read apart in the STATUS column (the Ready reason); Waiting from Baking
	// only in status.rollout.phase, the osmops_rollout_held gauge and osmops rollout: a column
	// more would not fit -o wide in 120 characters.
	for i, want := range map[int]string{2: gitopsv1alpha1.ValidationFailedReason, 4: gitopsv1alpha1.WaitingForWaveReason, 5: gitopsv1alpha1.RolloutHaltedReason} {
		if !strings.Contains(wide[i], want) {
			t.Errorf("-o wide row %d lacks the reason %q:\n%s", i, want, strings.Join(wide, "\n"))
		}
	}
}

func TestOsmClusterColumnsFit(t *testing.T) {
	cluster := func(name string, ready metav1.ConditionStatus, reason, message string) runtime.Object {
		return &gitopsv1alpha1.OsmCluster{
			TypeMeta: metav1.TypeMeta{APIVersion: gitopsv1alpha1.GroupVersion.String(), Kind: gitopsv1alpha1.OsmClusterKind},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "tenant-a",
				CreationTimestamp: metav1.NewTime(time.Now().Add(-26 * time.Hour))},
			Spec: gitopsv1alpha1.OsmClusterSpec{URL: "https://osm-east.example.com:9999", Project: "tenant-a"},
			Status: gitopsv1alpha1.OsmClusterStatus{OSMVersion: "15.0.7+gd4e8a3c", Deployments: 12,
				Conditions: []metav1.Condition{{Type: meta.ReadyCondition, Status: ready, Reason: reason, Message: message}}},
		}
	}
	objects := []runtime.Object{
		cluster("osm-production-east", metav1.ConditionTrue, gitopsv1alpha1.ConnectedReason, "OSM 15.0.7 answers at https://osm-east.example.com:9999; 3 VIM account(s)"),
		cluster("osm-production-west", metav1.ConditionFalse, gitopsv1alpha1.AuthenticationFailedReason,
			"authenticating: 401 Unauthorized; osmops will not log in again until the credentials Secret or the spec changes"),
	}
	for _, wide := range []bool{false, true} {
		rows := render(t, "osmclusters", wide, objects...)
		assertRowsFit(t, rows)
		t.Logf("wide=%v:\n%s", wide, strings.Join(rows, "\n"))
	}
}

func TestShortRevision(t *testing.T) {
	for revision, want := range map[string]string{
		gitRevision:    "main@3f1c0a2",
		branchRevision: "lab-east@3f1c0a2",
		"release/2026.11-lab-east@sha1:3f1c0a2b9d8e7f60514a3b2c1d0e9f8a7b6c5d4e":         "release/202…@3f1c0a2",
		"latest@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef": "latest@0123456",
		"sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef":        "sha256:0123456",
		"v1.2.0@sha1:0123abc": "v1.2.0@0123abc",
		"":                    "",
		"a-revision-in-no-format-flux-writes-and-much-longer-than-a-column": "a-revision-in-no-f…",
	} {
		if got := gitopsv1alpha1.ShortRevision(revision); got != want {
			t.Errorf("ShortRevision(%q) = %q, want %q", revision, got, want)
		}
	}
}

// TestExplainReadsWell holds the doc comments of the API types, which kubectl explain shows:
// every description is whole sentences, no line of it is longer than kubectl explain's width
// (wrap the comment at 76 columns of text), and every field with a default says it.
func TestExplainReadsWell(t *testing.T) {
	for _, plural := range []string{"osmdeployments", "osmclusters"} {
		schema := crdOf(t, plural).Spec.Versions[0].Schema.OpenAPIV3Schema
		for _, name := range []string{"spec", "status"} {
			property := schema.Properties[name]
			walkSchema(plural+"."+name, &property, func(path string, s *apiextensionsv1.JSONSchemaProps) {
				if foreign(path) {
					return
				}
				description := strings.TrimSpace(s.Description)
				switch {
				case description == "" && strings.HasSuffix(path, "[]") || strings.HasSuffix(path, "{}"):
					return // the items of a list or map: the field says what they are
				case description == "":
					t.Errorf("%s has no description", path)
				case !strings.HasSuffix(description, "."):
					t.Errorf("%s: the description ends mid-sentence: %q", path, description)
				}
				for line := range strings.SplitSeq(description, "\n") {
					if len([]rune(line)) > explainWidth {
						t.Errorf("%s: a line of %d characters, which kubectl explain breaks mid-sentence: %q", path, len([]rune(line)), line)
					}
				}
				if s.Default != nil && !strings.Contains(strings.ToLower(description), "default") {
					t.Errorf("%s has the default %s, which its description does not state", path, s.Default.Raw)
				}
			})
		}
	}
}

// foreign tells the fields whose descriptions are other projects' (Kubernetes' Condition,
// Flux's NamespacedObjectReference, NamespacedObjectKindReference and CustomHealthCheck).
func foreign(path string) bool {
	return strings.Contains(path, ".conditions[]") || strings.Contains(path, ".dependsOn[]") ||
		strings.Contains(path, ".healthChecks[]") || strings.Contains(path, ".healthCheckExprs[]")
}

func walkSchema(path string, s *apiextensionsv1.JSONSchemaProps, visit func(string, *apiextensionsv1.JSONSchemaProps)) {
	visit(path, s)
	for name, property := range s.Properties {
		walkSchema(path+"."+name, &property, visit)
	}
	if s.Items != nil && s.Items.Schema != nil {
		walkSchema(path+"[]", s.Items.Schema, visit)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		walkSchema(path+"{}", s.AdditionalProperties.Schema, visit)
	}
}
