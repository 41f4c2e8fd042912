// Package engine holds the GitOps engine's steps that do not need Kubernetes: observing OSM
// (one list call per kind), planning the difference between a validated revision and what OSM
// runs (a pure function), applying the plan with bounded parallelism, and reading the outcome
// of OSM's operations. The OsmDeployment reconciler orchestrates them and owns the status.
//
// It must not import a Kubernetes client, controller-runtime, internal/controller or the
// simulator: the controller calls the engine, never the other way round, and the engine's steps
// run without a cluster (as `osmops diff` runs them). Nor does it import the API types: it
// speaks its own records (inventory.go), which the controller maps to the status and back.
package engine
