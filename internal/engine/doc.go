// Package engine holds the GitOps engine's steps that do not need Kubernetes: observing OSM
// (one list call per kind), planning the difference between a validated revision and what OSM
// runs (a pure function), applying the plan with bounded parallelism, and reading the outcome
// of OSM's operations. The OsmDeployment reconciler orchestrates them and owns the status.
package engine
