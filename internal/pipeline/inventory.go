package pipeline

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/engine"
)

// The engine speaks its own types; these pure functions map the status of the API to them and
// back, field by field (TestEngineMappingKeepsEveryField), at each call into the engine. A nil
// list stays nil, so that a status mapped there and back is the status it was.

// EngineInventory is the engine's copy of a status inventory.
func EngineInventory(in gitopsv1alpha1.Inventory) engine.Inventory {
	return engine.Inventory{NsInstances: mapped(in.NsInstances, EngineInstance), Packages: mapped(in.Packages, enginePackage),
		ReferencesDigest: in.ReferencesDigest}
}

// APIInventory is the status inventory of the engine's (a plan's).
func APIInventory(in engine.Inventory) *gitopsv1alpha1.Inventory {
	return &gitopsv1alpha1.Inventory{NsInstances: mapped(in.NsInstances, APIInstance), Packages: mapped(in.Packages, apiPackage),
		ReferencesDigest: in.ReferencesDigest}
}

// EngineInstance is the engine's copy of a status inventory entry.
func EngineInstance(e gitopsv1alpha1.NsInstanceEntry) engine.InstanceRecord {
	return engine.InstanceRecord{Name: e.Name, ID: e.ID, Digest: e.Digest, Origins: e.Origins, State: EngineState(e.State), Reason: e.Reason,
		InstallFailures: e.InstallFailures, UpgradeFailures: e.UpgradeFailures, RolledBack: e.RolledBack}
}

// APIInstance is the status inventory entry of the engine's.
func APIInstance(e engine.InstanceRecord) gitopsv1alpha1.NsInstanceEntry {
	return gitopsv1alpha1.NsInstanceEntry{Name: e.Name, ID: e.ID, Digest: e.Digest, Origins: e.Origins, State: APIState(e.State), Reason: e.Reason,
		InstallFailures: e.InstallFailures, UpgradeFailures: e.UpgradeFailures, RolledBack: e.RolledBack}
}

// EngineState is the engine's name of an NS instance state: the API's enum and the engine's
// states spell the same values (TestEngineStatesAreTheAPIs).
func EngineState(s gitopsv1alpha1.NsInstanceState) engine.InstanceState {
	return engine.InstanceState(s)
}

// APIState is the API's name of an engine's NS instance state.
func APIState(s engine.InstanceState) gitopsv1alpha1.NsInstanceState {
	return gitopsv1alpha1.NsInstanceState(s)
}

func enginePackage(e gitopsv1alpha1.PackageEntry) engine.PackageRecord {
	return engine.PackageRecord{Name: e.Name, Kind: e.Kind, ID: e.ID, Digest: e.Digest}
}

func apiPackage(e engine.PackageRecord) gitopsv1alpha1.PackageEntry {
	return gitopsv1alpha1.PackageEntry{Name: e.Name, Kind: e.Kind, ID: e.ID, Digest: e.Digest}
}

// EngineOperations are the engine's copies of the operations the status waits for.
func EngineOperations(in []gitopsv1alpha1.OperationEntry) []engine.OperationRecord {
	return mapped(in, func(op gitopsv1alpha1.OperationEntry) engine.OperationRecord {
		return engine.OperationRecord{ID: op.ID, Type: op.Type, NsInstance: op.NsInstance, State: op.State,
			StartTime: op.StartTime.Time, MoreUpgrades: op.MoreUpgrades, Rollback: op.Rollback}
	})
}

// APIOperations are the status entries of the engine's operations.
func APIOperations(in []engine.OperationRecord) []gitopsv1alpha1.OperationEntry {
	return mapped(in, func(op engine.OperationRecord) gitopsv1alpha1.OperationEntry {
		return gitopsv1alpha1.OperationEntry{ID: op.ID, Type: op.Type, NsInstance: op.NsInstance, State: op.State,
			StartTime: metav1.NewTime(op.StartTime), MoreUpgrades: op.MoreUpgrades, Rollback: op.Rollback}
	})
}

// mapped is each element of in mapped by f; nil for nil.
func mapped[T, U any](in []T, f func(T) U) []U {
	if in == nil {
		return nil
	}
	out := make([]U, len(in))
	for i, e := range in {
		out[i] = f(e)
	}
	return out
}
