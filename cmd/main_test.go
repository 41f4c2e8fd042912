package main

import (
	"testing"

	flag "github.com/spf13/pflag"
)

// managerArgs renders a config/ layer as kubectl kustomize does and returns the manager's
// arguments.
func managerArgs(t *testing.T, layer string) []string {
	t.Helper()
	return containerArgs(t, renderKustomize(t, layer)["Deployment/osmops-controller-manager"])
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
