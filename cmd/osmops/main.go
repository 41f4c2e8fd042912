// Command osmops checks, previews and drives osmops: validate and diff a GitOps repository with
// the operator's own code, and get, reconcile, suspend, resume, see the events and the rollout
// waves of the OsmDeployments of a cluster. Installed as kubectl-osmops, it runs as "kubectl osmops".
//
// Its commands live in internal/cli; this file only runs them.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/osmops/osmops/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := cli.Execute(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
