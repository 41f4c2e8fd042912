package controller

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// serialPatcher writes what reconciles change of an object since its last write: its metadata
// (the finalizer) and its status, each in one merge patch, and only when they changed.
//
// It replaces Flux's patch.SerialPatcher, which sends the conditions in a request of their own
// (so that several controllers can share the conditions of an object) before the rest of the
// status: only osmops writes the status of its objects, and that extra request was a third of
// the operator's writes to the API server with a fleet of OsmDeployments (docs/benchmarks.md).
type serialPatcher struct {
	client client.Client
	before client.Object
}

func newSerialPatcher(obj client.Object, c client.Client) *serialPatcher {
	return &serialPatcher{client: c, before: obj.DeepCopyObject().(client.Object)}
}

// Patch sends the changes of obj since the patcher last wrote it (or was made), and reads back
// the object the API server stored.
func (p *serialPatcher) Patch(ctx context.Context, obj client.Object) error {
	data, err := client.MergeFrom(p.before).Data(obj)
	if err != nil {
		return fmt.Errorf("computing the patch: %w", err)
	}
	var changes map[string]json.RawMessage
	if err := json.Unmarshal(data, &changes); err != nil {
		return fmt.Errorf("reading the patch: %w", err)
	}
	metadata, metadataChanged := changes["metadata"]
	status, statusChanged := changes["status"]
	// The status goes first: during a deletion the metadata patch that removes the finalizer
	// deletes the object, after which its status cannot be written.
	if statusChanged {
		if err := p.client.Status().Patch(ctx, obj, mergePatch("status", status),
			&client.SubResourcePatchOptions{PatchOptions: client.PatchOptions{FieldManager: fieldOwner}}); err != nil {
			return err
		}
	}
	if metadataChanged {
		if err := p.client.Patch(ctx, obj, mergePatch("metadata", metadata), client.FieldOwner(fieldOwner)); err != nil {
			return err
		}
	}
	p.before = obj.DeepCopyObject().(client.Object)
	return nil
}

// mergePatch is a JSON merge patch of one top-level field.
func mergePatch(field string, change json.RawMessage) client.Patch {
	data, _ := json.Marshal(map[string]json.RawMessage{field: change}) // a RawMessage always encodes
	return client.RawPatch(types.MergePatchType, data)
}
