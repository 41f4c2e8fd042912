package controller

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The osmops_ns_instances gauge reports every state the API's enum allows: a state added to
// the enum and not to the gauge would leave its instances uncounted (Drifted was).
func TestInstanceStatesAreTheEnum(t *testing.T) {
	source, err := os.ReadFile(filepath.Join("..", "..", "api", "v1alpha1", "osmdeployment_types.go"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`\+kubebuilder:validation:Enum=(\S+)\ntype NsInstanceState string`).FindSubmatch(source)
	if m == nil {
		t.Fatal("no enum marker above type NsInstanceState")
	}
	var reported []string
	for _, state := range instanceStates {
		reported = append(reported, string(state))
	}
	enum := strings.Split(string(m[1]), ";")
	slices.Sort(enum)
	slices.Sort(reported)
	if !slices.Equal(enum, reported) {
		t.Errorf("the gauge reports %v, the enum is %v", reported, enum)
	}
}
