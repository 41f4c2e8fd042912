// Package cli is the osmops command line tool: validate and diff a GitOps repository with the
// operator's own code (internal/gitops, internal/engine), and Flux-style verbs on the
// OsmDeployments of a cluster. What it prints is made by pure rendering functions, so that
// the output is tested without a cluster or an OSM.
//
// It reaches OSM and Kubernetes only through the operator's own packages (internal/controller for
// the preview, the owner identity and the values; internal/engine, gitops, osm), so that what it
// shows is what the manager would do; it must not import the simulator or the test harness.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/osmops/osmops/internal/printable"
)

// Exit statuses. Validate exits ExitFindings when the repository has problems, diff when the
// revision changes OSM, and the cluster verbs when the object is not Ready.
const (
	ExitOK       = 0
	ExitFindings = 1
	ExitError    = 2
)

// exitError ends the command with code; its error, when not nil, is printed on stderr.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// findings ends a command that printed what it found with ExitFindings, printing nothing more.
var findings = &exitError{code: ExitFindings}

// Execute runs the command line args (without the program name) and returns the exit status.
func Execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := NewRootCommand(stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	var exit *exitError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &exit):
		if exit.err != nil {
			printf(stderr, "✗ %v\n", exit.err)
		}
		return exit.code
	default: // a usage error, or a failure to reach the cluster or OSM
		printf(stderr, "✗ %v\n", err)
		return ExitError
	}
}

// NewRootCommand is the osmops command with every subcommand, writing to stdout and stderr.
func NewRootCommand(stdout, stderr io.Writer) *cobra.Command {
	kube := genericclioptions.NewConfigFlags(false)
	root := &cobra.Command{
		Use:   "osmops",
		Short: "Check, preview and drive osmops, GitOps for Open Source MANO",
		Long: `osmops checks a GitOps repository the way the operator reads it (validate), shows the plan
a revision would make in OSM (diff), drives the OsmDeployments of a cluster (get, reconcile,
suspend, resume, events), follows one from its revision to OSM's operations (trace), and shows
the waves of a rollout across them (rollout). Installed as kubectl-osmops, it also runs as
"kubectl osmops".`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	kube.AddFlags(root.PersistentFlags())
	root.AddCommand(
		newValidateCommand(),
		newDiffCommand(kube),
		newGetCommand(kube),
		newReconcileCommand(kube),
		newSuspendCommand(kube),
		newResumeCommand(kube),
		newEventsCommand(kube),
		newTraceCommand(kube),
		newRolloutCommand(kube),
	)
	return root
}

// printf is how the commands write what they show: what OSM, Git or a cluster put in the
// arguments (an id, a name, a message) has its control characters escaped, so that it cannot
// rewrite the terminal; the format's own layout is kept.
func printf(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, format, printable.Args(args)...)
}
