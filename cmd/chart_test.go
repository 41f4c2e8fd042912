package main

import (
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	flag "github.com/spf13/pflag"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/osmops/osmops/internal/testing/testenv"
)

// installNamespace is the namespace config/default installs into.
const installNamespace = "osmops-system"

// repoPath is a path in the repository.
func repoPath(elem ...string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(append([]string{filepath.Dir(file), ".."}, elem...)...)
}

// The Helm chart installs what config/default does: with the release name osmops, in
// osmops-system and the image tag latest, the same objects (the Namespace aside: Helm
// installs into one) with the same specs, rules, subjects and CRDs. Only labels differ.
func TestHelmChartInstallsWhatConfigDefaultDoes(t *testing.T) {
	chartObjects := renderChart(t, map[string]any{"image": map[string]any{"tag": "latest"}})
	configObjects := renderKustomize(t, "default")
	delete(configObjects, "Namespace/"+installNamespace)
	if diff := cmp.Diff(keys(configObjects), keys(chartObjects)); diff != "" {
		t.Fatalf("objects of config/default (-) and of the chart (+):\n%s", diff)
	}
	for key, want := range configObjects {
		if diff := cmp.Diff(comparable(want), comparable(chartObjects[key])); diff != "" {
			t.Errorf("%s: config/default (-) and the chart (+) differ:\n%s", key, diff)
		}
	}
}

// The chart's values turn into manager flags the manager accepts.
func TestHelmChartValuesAreManagerFlags(t *testing.T) {
	objects := renderChart(t, map[string]any{
		"logLevel": "debug", "noCrossNamespaceRefs": true, "leaderElection": false,
		"eventsAddr": "http://notification-controller.flux-system.svc.cluster.local./",
		"extraArgs":  []any{"--concurrent=8"},
	})
	args := containerArgs(t, objects["Deployment/osmops-controller-manager"])
	var o options
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	o.bindFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("the manager refuses the chart's arguments %v: %v", args, err)
	}
	if !o.acl.NoCrossNamespaceRefs || o.eventsAddr == "" || o.leaderElection.Enable {
		t.Errorf("arguments %v: cross-namespace refs refused %v, events address %q, leader election %v",
			args, o.acl.NoCrossNamespaceRefs, o.eventsAddr, o.leaderElection.Enable)
	}
}

// helm lint finds nothing wrong with the chart (it would only like an icon).
func TestHelmLint(t *testing.T) {
	linter := lint.All(repoPath("charts", "osmops"), nil, installNamespace, false)
	for _, m := range linter.Messages {
		if m.Severity >= support.WarningSev {
			t.Errorf("helm lint: %s", m)
		}
	}
}

// The chart's CRDs are config/crd/bases's (make manifests copies them).
func TestHelmChartCRDsAreGenerated(t *testing.T) {
	want, err := filepath.Glob(repoPath("config", "crd", "bases", "*.yaml"))
	if err != nil || len(want) == 0 {
		t.Fatalf("no CRDs in config/crd/bases: %v", err)
	}
	for _, file := range want {
		crd, _ := os.ReadFile(file)
		copied, err := os.ReadFile(repoPath("charts", "osmops", "crds", filepath.Base(file)))
		if err != nil || string(copied) != string(crd) {
			t.Errorf("charts/osmops/crds/%s is not config/crd/bases's: run make manifests", filepath.Base(file))
		}
	}
}

// renderChart renders the chart as `helm template osmops charts/osmops -n osmops-system
// --include-crds` does, with values, and returns its objects by "Kind/name".
func renderChart(t *testing.T, values map[string]any) map[string]map[string]any {
	t.Helper()
	chart, err := loader.Load(repoPath("charts", "osmops"))
	if err != nil {
		t.Fatal(err)
	}
	install := action.NewInstall(&action.Configuration{})
	install.ReleaseName, install.Namespace = "osmops", installNamespace
	install.ClientOnly, install.DryRun, install.IncludeCRDs = true, true, true
	if install.KubeVersion, err = chartutil.ParseKubeVersion(testenv.K8sVersion); err != nil {
		t.Fatal(err)
	}
	release, err := install.Run(chart, values)
	if err != nil {
		t.Fatalf("helm template: %v", err)
	}
	return objectsOf(t, strings.Split(release.Manifest, "\n---\n"))
}

// renderKustomize renders a config/ layer as kubectl kustomize does.
func renderKustomize(t *testing.T, layer string) map[string]map[string]any {
	t.Helper()
	resources, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), repoPath("config", layer))
	if err != nil {
		t.Fatal(err)
	}
	var docs []string
	for _, r := range resources.Resources() {
		data, err := r.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(data))
	}
	return objectsOf(t, docs)
}

func objectsOf(t *testing.T, docs []string) map[string]map[string]any {
	t.Helper()
	objects := map[string]map[string]any{}
	for _, doc := range docs {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("%v in:\n%s", err, doc)
		}
		if obj == nil {
			continue
		}
		metadata, _ := obj["metadata"].(map[string]any)
		objects[obj["kind"].(string)+"/"+metadata["name"].(string)] = obj
	}
	return objects
}

// comparable is an object without the labels and annotations that only say who installed it;
// the aggregation labels of ClusterRoles, which grant access, are kept.
func comparable(obj map[string]any) map[string]any {
	out := map[string]any{}
	maps.Copy(out, obj)
	metadata := map[string]any{}
	maps.Copy(metadata, obj["metadata"].(map[string]any))
	labels, _ := metadata["labels"].(map[string]any)
	kept := map[string]any{}
	for k, v := range labels {
		if strings.HasPrefix(k, "rbac.authorization.k8s.io/aggregate-to-") {
			kept[k] = v
		}
	}
	delete(metadata, "labels")
	delete(metadata, "annotations")
	if len(kept) > 0 {
		metadata["labels"] = kept
	}
	out["metadata"] = metadata
	return out
}

func keys(m map[string]map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// containerArgs returns the manager container's arguments of a rendered Deployment.
func containerArgs(t *testing.T, deployment map[string]any) []string {
	t.Helper()
	data, err := yaml.Marshal(deployment)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct {
						Args []string `json:"args"`
					} `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &d); err != nil || len(d.Spec.Template.Spec.Containers) == 0 {
		t.Fatalf("no container in the Deployment: %v", err)
	}
	return d.Spec.Template.Spec.Containers[0].Args
}
