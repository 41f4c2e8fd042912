// Package e2e holds the end-to-end tests, built only with the e2e tag (`make test-e2e`): a real
// API server, Flux's source-, notification- and kustomize-controller, a Git server on
// loopback, the NBI simulator and the operator as its own process.
//
// It drives the operator from outside, as a person would (processes, the API server, Git pushes,
// the simulator's control API): it must not import the operator's packages (internal/controller,
// engine, gitops, osm).
package e2e
