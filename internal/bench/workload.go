package bench

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"path/filepath"

	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/testing/openldap"
)

// VIMAccount is the VIM account of every NS instance of the benchmark.
const VIMAccount = "site1"

// Instance is one declared NS instance: its name and the one Helm value the scenarios change.
type Instance struct {
	Name         string
	ReplicaCount string
	// VIMAccount is the VIM account it names; VIMAccount (the simulators') when empty.
	VIMAccount string
}

// Workload is the sequence of revisions of one repository of N NS instances, one per scenario.
type Workload struct {
	N int
	// Prefix starts every instance name, so that workloads can share an OSM.
	Prefix string
	// VIMAccount is the VIM account of every instance (Instance.VIMAccount).
	VIMAccount string
}

// Changed is how many instances a 10% change touches (at least one).
func (w Workload) Changed() int { return max(w.N/10, 1) }

// Name is the name of the i-th instance.
func (w Workload) Name(i int) string { return fmt.Sprintf("%s-%04d", w.Prefix, i) }

// First is scenario A's revision: every instance with replicaCount "1".
func (w Workload) First() []Instance {
	instances := make([]Instance, w.N)
	for i := range instances {
		instances[i] = Instance{Name: w.Name(i), ReplicaCount: "1", VIMAccount: w.VIMAccount}
	}
	return instances
}

// WithChangedValues is scenario B's revision: the first 10% of the instances get
// replicaCount "2".
func (w Workload) WithChangedValues() []Instance {
	instances := w.First()
	for i := range w.Changed() {
		instances[i].ReplicaCount = "2"
	}
	return instances
}

// Pruned is scenario D's revision: B's without its last 10%, which the first 10% (the ones B
// changed) never overlap as long as N >= 2.
func (w Workload) Pruned() []Instance {
	instances := w.WithChangedValues()
	return instances[:len(instances)-w.Changed()]
}

// Reverted is B2's revision: D's with B's change reverted.
func (w Workload) Reverted() []Instance {
	instances := w.Pruned()
	for i := range w.Changed() {
		instances[i].ReplicaCount = "1"
	}
	return instances
}

// ChangedNames are the instances B changes.
func (w Workload) ChangedNames() []string { return names(w.WithChangedValues()[:w.Changed()]) }

// PrunedNames are the instances D removes.
func (w Workload) PrunedNames() []string { return names(w.First()[w.N-w.Changed():]) }

func names(instances []Instance) []string {
	out := make([]string, len(instances))
	for i, instance := range instances {
		out[i] = instance.Name
	}
	return out
}

// RepositoryFiles is the content of a revision (slash path to content): the package sources
// given (osm-pkgs/NAME/FILE, as openldap.PackageFiles returns them) and one deployment file per
// instance (deploy/NAME.osmops.yaml).
func RepositoryFiles(instances []Instance, packages map[string]string) map[string]string {
	files := make(map[string]string, len(instances)+len(packages))
	maps.Copy(files, packages)
	for _, instance := range instances {
		files["deploy/"+instance.Name+".osmops.yaml"] = openldap.NsInstanceFile(instance.Name, cmp.Or(instance.VIMAccount, VIMAccount), instance.ReplicaCount)
	}
	return files
}

// ParseRevision validates repository files the way the operator does (gitops.Load), so that
// the CLI model sends the very packages and values the operator sends.
func ParseRevision(files map[string]string) (*gitops.Revision, error) {
	return parseRevision(files, gitops.Options{})
}

// parseRevision loads repository files with opts.
func parseRevision(files map[string]string, opts gitops.Options) (*gitops.Revision, error) {
	root, err := os.MkdirTemp("", "osmops-bench-revision-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(root) }()
	for name, content := range files {
		full := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			return nil, err
		}
	}
	return gitops.Load(root, opts)
}
