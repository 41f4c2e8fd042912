// Command osmops-demo runs the osmops demo on this machine, on loopback and without internet:
// an API server, Flux's source-controller, a Git server with a demo repository, three NBI
// simulators (three OSM sites) and the operator, set up for a tenant `telco` whose
// OsmDeployments roll each commit out to the sites in waves (sites.go).
//
//	osmops-demo up     start the demo in the background and print what to try (make demo)
//	osmops-demo down   stop it and everything it started (make demo-stop)
//
// `up` starts a supervisor process, detached from the terminal, that runs the stack until
// `down` sends it SIGTERM. Its pid is in .demo/demo.pid and its log in .demo/logs/.
//
// The stack lives in internal/testing/devstack; no product package imports either.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// superviseCommand is the hidden subcommand `up` starts in the background.
const superviseCommand = "supervise"

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "osmops-demo: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: osmops-demo up|down [flags]; osmops-demo up -h lists the flags")
	}
	cfg, err := parseFlags(args[0], args[1:])
	if err != nil {
		return err
	}
	switch args[0] {
	case "up":
		return up(cfg, stdout)
	case "down":
		return down(cfg, stdout)
	case superviseCommand:
		return supervise(cfg)
	}
	return fmt.Errorf("unknown command %q: want up or down", args[0])
}

// config is what the commands are told by their flags.
type config struct {
	workDir          string
	operator         string
	simulator        string
	sourceController string
	demoRepo         string
}

func parseFlags(command string, args []string) (config, error) {
	var cfg config
	flags := flag.NewFlagSet("osmops-demo "+command, flag.ContinueOnError)
	flags.StringVar(&cfg.workDir, "workdir", ".demo", "The folder of the demo's state and logs.")
	flags.StringVar(&cfg.operator, "operator", "bin/manager", "The operator binary (go build -o bin/manager ./cmd).")
	flags.StringVar(&cfg.simulator, "simulator", "bin/osm-nbi-sim", "The NBI simulator binary (go build -o bin/osm-nbi-sim ./cmd/osm-nbi-sim).")
	flags.StringVar(&cfg.sourceController, "source-controller", "", "Flux's source-controller binary, with its CRDs in crd/ beside it (hack/flux-controller.sh source-controller).")
	flags.StringVar(&cfg.demoRepo, "demo-repo", "hack/demo-repo", "The folder the demo repository is seeded from.")
	if err := flags.Parse(args); err != nil {
		return config{}, err
	}
	// Absolute paths, because the supervisor and the stack's processes do not share the
	// caller's working directory assumptions.
	for _, path := range []*string{&cfg.workDir, &cfg.operator, &cfg.simulator, &cfg.sourceController, &cfg.demoRepo} {
		if *path == "" {
			continue
		}
		abs, err := filepath.Abs(*path)
		if err != nil {
			return config{}, err
		}
		*path = abs
	}
	return cfg, nil
}

// args renders cfg as flags, to hand it to the supervisor.
func (c config) args() []string {
	return []string{
		"--workdir=" + c.workDir,
		"--operator=" + c.operator,
		"--simulator=" + c.simulator,
		"--source-controller=" + c.sourceController,
		"--demo-repo=" + c.demoRepo,
	}
}
