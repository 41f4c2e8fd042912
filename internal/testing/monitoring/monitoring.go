// Package monitoring reads the monitoring layer of config/monitoring as its users install it
// (rendered with the kustomize library, as `kubectl apply -k` does), for the tests that hold
// it to the operator: the unit test that it renders, and the end-to-end test that every metric
// its alerts and dashboard query is one the running operator serves.
//
// Test harness: no product package may import it.
package monitoring

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/osmops/osmops/internal/testing/testenv"
)

// Layer is config/monitoring, rendered.
type Layer struct {
	// Kinds counts the rendered objects by kind.
	Kinds map[string]int
	// Queries are the PromQL expressions of the alert rules and the dashboard's panels, each
	// with where it is ("alert OsmDeploymentStalled", "panel NBI traffic").
	Queries []Query
	// StateMetrics are the metrics kube-state-metrics exports with the layer's
	// custom-resource-state configuration, not the operator.
	StateMetrics []string
	// StatePaths are the fields of the osmops objects that configuration reads.
	StatePaths []StatePath
}

// StatePath is a field of an object of Group, Version and Kind that kube-state-metrics reads:
// its path from the object's root, where "[type=Ready]" picks an item of a list.
type StatePath struct {
	Group, Version, Kind string
	Path                 []string
}

// Query is one PromQL expression of the layer.
type Query struct {
	Where string
	Expr  string
}

// metricName matches the names of the metrics the layer may query: the operator's own and
// controller-runtime's (which the operator serves too). A PromQL parser would find every name,
// but Prometheus's module pulls in a newer Kubernetes than the operator's; the layer's test
// checks instead that every query names at least one metric of these prefixes.
var metricName = regexp.MustCompile(`\b(?:osmops|controller_runtime|workqueue)_[a-z0-9_]+\b`)

// MetricNames returns the metric names the query reads.
func (q Query) MetricNames() []string {
	names := metricName.FindAllString(q.Expr, -1)
	slices.Sort(names)
	return slices.Compact(names)
}

// Read renders config/monitoring and reads its queries and the kube-state-metrics
// configuration beside it.
func Read() (*Layer, error) {
	dir := filepath.Join(testenv.RepoRoot(), "config", "monitoring")
	resources, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	layer := &Layer{Kinds: map[string]int{}}
	for _, r := range resources.Resources() {
		layer.Kinds[r.GetKind()]++
		data, err := r.AsYAML()
		if err != nil {
			return nil, err
		}
		switch r.GetKind() {
		case "PrometheusRule":
			err = layer.readRules(data)
		case "ConfigMap":
			err = layer.readDashboards(data)
		}
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", r.GetKind(), r.GetName(), err)
		}
	}
	stateFile := filepath.Join(dir, "kube-state-metrics", "custom-resource-state.yaml")
	if layer.StateMetrics, layer.StatePaths, err = readStateMetrics(stateFile); err != nil {
		return nil, fmt.Errorf("%s: %w", stateFile, err)
	}
	return layer, nil
}

func (l *Layer) readRules(data []byte) error {
	var rule struct {
		Spec struct {
			Groups []struct {
				Rules []struct {
					Alert string `json:"alert"`
					Expr  string `json:"expr"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &rule); err != nil {
		return err
	}
	for _, group := range rule.Spec.Groups {
		for _, r := range group.Rules {
			l.Queries = append(l.Queries, Query{Where: "alert " + r.Alert, Expr: r.Expr})
		}
	}
	return nil
}

func (l *Layer) readDashboards(data []byte) error {
	var configMap struct {
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal(data, &configMap); err != nil {
		return err
	}
	for file, content := range configMap.Data {
		var dashboard struct {
			Panels []struct {
				Title   string `json:"title"`
				Targets []struct {
					Expr string `json:"expr"`
				} `json:"targets"`
			} `json:"panels"`
		}
		if err := json.Unmarshal([]byte(content), &dashboard); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		for _, panel := range dashboard.Panels {
			for _, target := range panel.Targets {
				l.Queries = append(l.Queries, Query{Where: "panel " + panel.Title, Expr: target.Expr})
			}
		}
	}
	return nil
}

// readStateMetrics returns the names of the metrics a kube-state-metrics custom-resource-state
// configuration defines (prefix_name), and the fields they read.
func readStateMetrics(file string) ([]string, []StatePath, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, err
	}
	type labels struct {
		LabelsFromPath map[string][]string `json:"labelsFromPath"`
	}
	var config struct {
		Kind string `json:"kind"`
		Spec struct {
			Resources []struct {
				GroupVersionKind struct {
					Group   string `json:"group"`
					Version string `json:"version"`
					Kind    string `json:"kind"`
				} `json:"groupVersionKind"`
				MetricNamePrefix string `json:"metricNamePrefix"`
				Metrics          []struct {
					Name string `json:"name"`
					Help string `json:"help"`
					Each struct {
						Type string `json:"type"`
						Info labels `json:"info"`
					} `json:"each"`
					labels `json:",inline"`
				} `json:"metrics"`
			} `json:"resources"`
		} `json:"spec"`
	}
	if err := yaml.UnmarshalStrict(data, &config); err != nil {
		return nil, nil, err
	}
	if config.Kind != "CustomResourceStateMetrics" {
		return nil, nil, fmt.Errorf("kind is %q, not CustomResourceStateMetrics", config.Kind)
	}
	var names []string
	var paths []StatePath
	for _, r := range config.Spec.Resources {
		for _, m := range r.Metrics {
			names = append(names, r.MetricNamePrefix+"_"+m.Name)
			for _, set := range []labels{m.labels, m.Each.Info} {
				for _, path := range set.LabelsFromPath {
					paths = append(paths, StatePath{Group: r.GroupVersionKind.Group, Version: r.GroupVersionKind.Version, Kind: r.GroupVersionKind.Kind, Path: path})
				}
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names), paths, nil
}
