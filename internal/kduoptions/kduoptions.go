// Package kduoptions names the keys of a KDU upgrade's primitive_params that OSM's LCM reads as
// options instead of Helm values (LCM/osm_lcm/ns.py, action()); LCM removes all but the last
// from the values it passes to Helm. It stands apart from the NBI client (internal/osm), which
// sends them, so that the reading of Git (internal/gitops), which refuses them as value names,
// needs no client.
package kduoptions

const (
	Model                = "kdu_model"
	AtomicUpgrade        = "kdu_atomic_upgrade"
	ResetValues          = "kdu_reset_values"
	ReuseValues          = "kdu_reuse_values"
	ResetThenReuseValues = "kdu_reset_then_reuse_values"
)

// Reserved are the value names an upgrade cannot pass to Helm.
var Reserved = []string{Model, AtomicUpgrade, ResetValues, ReuseValues, ResetThenReuseValues}
