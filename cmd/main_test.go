package main

import (
	"path/filepath"
	"runtime"
	"testing"

	flag "github.com/spf13/pflag"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// managerArgs renders a config/ layer as kubectl kustomize does and returns the manager's
// arguments.
func managerArgs(t *testing.T, layer string) []string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "config", layer)
	resources, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	for _, r := range resources.Resources() {
		if r.GetKind() != "Deployment" {
			continue
		}
		data, err := r.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		var deployment appsv1.Deployment
		if err := yaml.Unmarshal(data, &deployment); err != nil {
			t.Fatal(err)
		}
		return deployment.Spec.Template.Spec.Containers[0].Args
	}
	t.Fatalf("%s renders no Deployment", dir)
	return nil
}

// The multi-tenant layer is config/default with cross-namespace references refused, and its
// arguments are ones the manager accepts.
func TestMultiTenantLayer(t *testing.T) {
	for _, test := range []struct {
		layer      string
		noCrossRef bool
	}{{"default", false}, {"multitenant", true}} {
		t.Run(test.layer, func(t *testing.T) {
			var o options
			fs := flag.NewFlagSet("manager", flag.ContinueOnError)
			o.bindFlags(fs)
			if err := fs.Parse(managerArgs(t, test.layer)); err != nil {
				t.Fatalf("the manager refuses the arguments of config/%s: %v", test.layer, err)
			}
			if o.acl.NoCrossNamespaceRefs != test.noCrossRef {
				t.Errorf("--no-cross-namespace-refs is %v, want %v", o.acl.NoCrossNamespaceRefs, test.noCrossRef)
			}
		})
	}
}
