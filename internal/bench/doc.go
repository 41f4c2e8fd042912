// Package bench measures the operator against the way people script OSM today: it drives the
// real reconcilers (controller-runtime manager on envtest) and a model of the `osm` CLI's
// request pattern through the same scenarios, each against its own NBI simulator process with
// an injected latency, and renders the figures as the Markdown report of `make bench`
// (docs/benchmarks.md).
//
// The simulator runs as a separate process (devstack's) so that the benchmark process's CPU time and memory
// are the operator's (the envtest API server and etcd are child processes too). Nothing here
// runs in `make test`: the unit tests only check the harness's pure parts and the CLI model's
// request counts.
//
// A measurement harness, not product code: only cmd/osmops-bench imports it, and no product
// package may.
package bench
