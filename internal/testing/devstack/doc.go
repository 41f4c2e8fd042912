// Package devstack starts and stops the whole osmops chain on loopback, for the local demo
// (cmd/osmops-demo) and the end-to-end tests (test/e2e), with no cluster and no internet:
//
//   - etcd and kube-apiserver through envtest, with the osmops and Flux CRDs, an admin
//     kubeconfig file and the flux-system namespace;
//   - Flux's source-controller as a process, and notification- and kustomize-controller when
//     asked for (the e2e tests; the operator then sends its events to notification-controller);
//   - a Git server (git-http-backend behind net/http/cgi) whose repositories accept pushes over
//     HTTP, with helpers that commit, remove and revert through a working clone;
//   - the NBI simulator as a process, with a client of its control API; StartSimulator runs one
//     on its own, as the bench (internal/bench) does for each measurement;
//   - the operator as a process, which a test can kill and restart;
//   - helpers that apply a tenant's objects: osmtenant's Secret, OsmCluster and OsmDeployment,
//     and a GitRepository of the stack's Git server.
//
// Every part listens on 127.0.0.1 only; its state and log live under Options.WorkDir, and each
// process has a pid file there so that StopLeftovers can clean up after a supervisor that died.
//
// Test and demo harness: no product package may import it.
package devstack
