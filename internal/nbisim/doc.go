// Package nbisim simulates the north-bound interface (NBI) of Open Source
// MANO, the REST API the operator drives, so that the operator's tests,
// benchmarks and demo, and people checking their GitOps repositories, can run
// without an OSM installation.
//
// A *Server is an http.Handler. Under /osm it answers like OSM's NBI of
// release 19: tokens, VIM accounts, K8s clusters, VNF and NS packages, NS
// instances with their VNF records, LCM operations (instantiate, action,
// scale, update, terminate), with the NBI's record shapes, status codes and
// error wording (taken from the v19 NBI code; see the comments next to each
// message). It also plays the part of OSM's LCM: an operation stays
// PROCESSING for a configurable delay and then completes (or fails), updating
// the NS and VNF records the way LCM does. Like LCM, it runs KDU upgrades and
// rollbacks on the KDU's Helm release and leaves the VNF record with the
// instantiation's values; State shows both (KDUState.Params, RecordParams).
//
// Some of the NBI's ways are easy to miss: a query parameter _id names the
// item (GET .../ns_lcm_op_occs?_id=X answers that one operation, whatever the
// other parameters), list filters follow osm_common's database (a value with
// a comma is a list, a number is not equal to its text), the full update of
// an in-use descriptor may change only what the NBI deems modifiable, and a
// user other than admin is locked after five failed logins.
//
// Under /sim/v1 (no token) a control API, also available as Go methods,
// injects faults (latency, error statuses, connection resets), makes chosen
// operations fail, holds or completes operations, revokes tokens, unlocks the
// user, counts requests and bytes per endpoint, keeps a bounded request log,
// dumps and resets the state.
//
// All state is in memory behind one mutex. Nothing runs in the background:
// operations move forward lazily, at the start of each request and of each
// Go accessor, by comparing their due time with the configured clock, so a
// test with a fake clock is fully deterministic.
//
// The files are grouped by room: server.go and config.go build the Server;
// store_*.go is the NBI's database (collections, records, list filters);
// nbi_*.go are the NBI's routes and handlers by topic (auth, users, admin,
// packages and descriptor changes, ns, quotas, schemas, responses); lcm*.go
// plays LCM (operations, Helm releases); control*.go is the control API and
// what it drives (faults, operation failures, request statistics). The
// emulation of Python, PyYAML and DeepDiff is package python below.
//
// It must not import the operator's packages (internal/osm, gitops, engine, controller) nor
// Kubernetes: it is held to OSM's code, so that the client's tests against it test the client
// rather than the client against itself. It shares only OSM's formats: internal/osmpkg, pyjson and
// pyyaml (through package python).
package nbisim
