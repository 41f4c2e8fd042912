package monitoring

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/osmops/osmops/internal/testing/testenv"
)

// config/monitoring renders to what its README promises, and each of its queries reads at
// least one metric the operator (or kube-state-metrics with the layer's configuration) serves;
// the end-to-end test TestMonitoringQueriesExportedMetrics checks those names on /metrics.
func TestMonitoringLayerRenders(t *testing.T) {
	layer, err := Read()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{"ServiceMonitor": 1, "PrometheusRule": 1, "ConfigMap": 1}, layer.Kinds); diff != "" {
		t.Errorf("rendered kinds (-want +got):\n%s", diff)
	}
	if len(layer.Queries) == 0 {
		t.Fatal("no alert or panel query")
	}
	for _, q := range layer.Queries {
		if len(q.MetricNames()) == 0 {
			t.Errorf("%s reads no osmops, controller_runtime or workqueue metric: %s", q.Where, q.Expr)
		}
	}
	if diff := cmp.Diff([]string{"osmops_resource_info"}, layer.StateMetrics); diff != "" {
		t.Errorf("kube-state-metrics metrics (-want +got):\n%s", diff)
	}
}

// Every field the kube-state-metrics configuration reads exists in the CRD's schema: a renamed
// field would otherwise leave its label empty, and the alerts that match on it silent.
func TestStateMetricsReadFieldsOfTheCRDs(t *testing.T) {
	layer, err := Read()
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]*apiextensionsv1.JSONSchemaProps{}
	for _, kind := range []string{"OsmCluster", "OsmDeployment"} {
		file := filepath.Join(testenv.RepoRoot(), "config", "crd", "bases", "gitops.osmops.io_"+strings.ToLower(kind)+"s.yaml")
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(data, &crd); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		schemas[crd.Spec.Group+"/"+crd.Spec.Versions[0].Name+"/"+kind] = crd.Spec.Versions[0].Schema.OpenAPIV3Schema
	}
	if len(layer.StatePaths) == 0 {
		t.Fatal("the kube-state-metrics configuration reads no field")
	}
	deployment := schemas["gitops.osmops.io/v1alpha1/OsmDeployment"]
	if missing := missingField(deployment, []string{"status", "conditions", "[type=Ready]", "staus"}); missing != "staus" {
		t.Fatalf("missingField of a misspelt field = %q, want the misspelt step", missing)
	}
	for _, p := range layer.StatePaths {
		schema, found := schemas[p.Group+"/"+p.Version+"/"+p.Kind]
		if !found {
			t.Errorf("%v reads %s/%s %s, which osmops does not define", p.Path, p.Group, p.Version, p.Kind)
			continue
		}
		if missing := missingField(schema, p.Path); missing != "" {
			t.Errorf("%s %v: %s is not in the CRD's schema", p.Kind, p.Path, missing)
		}
	}
}

// missingField follows path in schema and returns the first step that is not there, "" when
// all are. metadata is not described by CRD schemas and is taken as it is.
func missingField(schema *apiextensionsv1.JSONSchemaProps, path []string) string {
	if len(path) > 0 && path[0] == "metadata" {
		return ""
	}
	for _, step := range path {
		if strings.HasPrefix(step, "[") {
			if schema.Items == nil || schema.Items.Schema == nil {
				return step
			}
			schema = schema.Items.Schema
			continue
		}
		next, found := schema.Properties[step]
		if !found {
			return step
		}
		schema = &next
	}
	return ""
}
