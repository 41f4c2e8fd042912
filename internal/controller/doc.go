// Package controller holds the reconcilers of the osmops API. The OsmCluster reconciler checks
// an OSM NBI endpoint and keeps its client in the osmconn.Pool both reconcilers share. The
// OsmDeployment reconciler reads its Flux source's artifact into a revision (internal/artifact,
// internal/gitops), has the engine observe OSM, plan and apply (internal/engine), and alone
// writes the API's status, conditions, events and metrics. PreviewPlan runs the same steps for
// `osmops diff`. docs/architecture.md maps the packages and the states.
//
// It must not import the simulator (internal/nbisim), the test harness (internal/testing), the
// bench or the command line tool (internal/cli, which imports it); its tests use the first two.
package controller
