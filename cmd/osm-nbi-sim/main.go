// Command osm-nbi-sim serves a simulated OSM north-bound interface (NBI), for
// local demos, benchmarks and trying a GitOps repository without OSM.
//
// The NBI is under /osm (as on a real OSM, port 9999 by default) and the
// simulator's control API under /sim/v1 (faults, statistics, state; see
// package internal/nbisim).
//
// It only turns flags into internal/nbisim's options, and must not import the operator's packages
// (internal/osm, gitops, engine, controller): the simulator answers as OSM's code does, not as the
// client expects.
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	flag "github.com/spf13/pflag"
	yaml "go.yaml.in/yaml/v3"

	"github.com/osmops/osmops/internal/nbisim"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "osm-nbi-sim:", err)
		}
		os.Exit(2)
	}
}

// shutdownTimeout bounds the wait for requests in flight at shutdown.
const shutdownTimeout = 5 * time.Second

// options are the command line's settings.
type options struct {
	listen         string
	username       string
	password       string
	passwordFile   string
	project        string
	vimAccounts    []string
	seedFile       string
	operationDelay time.Duration
	lcmProfile     string
	requestLogSize int
	tokenLifetime  time.Duration
	autoremove     time.Duration
	tlsCert        string
	tlsKey         string
	seed           uint64
	charts         []string
	quotas         map[string]int
}

func parseOptions(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	flags := flag.NewFlagSet("osm-nbi-sim", flag.ContinueOnError)
	flags.SetOutput(stderr)
	flags.StringVar(&o.listen, "listen", "127.0.0.1:9999", "address to listen on (port 0 picks a free port)")
	flags.StringVar(&o.username, "username", nbisim.DefaultUsername, "the user the NBI accepts")
	flags.StringVar(&o.password, "password", "", "the user's password (default \"admin\"; prefer --password-file, "+
		"which other users of the machine cannot read from the process list)")
	flags.StringVar(&o.passwordFile, "password-file", "", "file holding the user's password")
	flags.StringVar(&o.project, "project", nbisim.DefaultProject, "the project's name")
	flags.StringArrayVar(&o.vimAccounts, "vim-account", nil, "VIM account to create, repeatable; NAME:nok8s for one without "+
		"a Kubernetes cluster (default vim1 when neither this nor --seed-file is given)")
	flags.StringVar(&o.seedFile, "seed-file", "", "YAML file listing VIM accounts and the charts of the Helm repositories: "+
		"vimAccounts: [{name, type, k8sCluster}], charts: [REPO/CHART:VERSION]")
	flags.StringArrayVar(&o.charts, "chart", nil, "a chart version of a Helm repository, REPO/CHART:VERSION, repeatable; with this or "+
		"the seed file's charts, the repositories named hold only the versions listed (default: stable/openldap 1.2.7 and 1.2.8, "+
		"cetic/phpldapadmin 0.1.2, prometheus-community/prometheus-openldap-exporter 0.1.0); other repositories hold every version")
	flags.DurationVar(&o.operationDelay, "operation-delay", nbisim.DefaultOperationDelay, "how long an LCM operation stays PROCESSING")
	flags.StringVar(&o.lcmProfile, "lcm-profile", "", `LCM's times by operation type and its message bus's pacing: "real" for OSM 19's as measured `+
		"(docs/fidelity.md); the types it names run their own time instead of --operation-delay")
	flags.IntVar(&o.requestLogSize, "request-log-size", nbisim.DefaultRequestLogSize, "how many of the last requests /sim/v1/requests keeps")
	flags.DurationVar(&o.autoremove, "autoremove-delay", nbisim.DefaultAutoremoveDelay, "how long a terminated NS record stays before OSM's autoremove deletes it")
	flags.DurationVar(&o.tokenLifetime, "token-lifetime", nbisim.DefaultTokenLifetime, "how long a token is valid")
	flags.StringVar(&o.tlsCert, "tls-cert", "", "TLS certificate file (PEM); with --tls-key, serve HTTPS")
	flags.StringVar(&o.tlsKey, "tls-key", "", "TLS private key file (PEM)")
	flags.Uint64Var(&o.seed, "seed", 1, "seed of the random source of error-rate faults")
	flags.StringToIntVar(&o.quotas, "quota", nil, fmt.Sprintf("the project's quotas, NAME=COUNT,... (OSM's names: %s); "+
		"a topic without one has OSM's default, %d", strings.Join(nbisim.QuotaNames, ", "), nbisim.DefaultQuota))
	if err := flags.Parse(args); err != nil {
		return nil, err
	}
	if flags.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %s", strings.Join(flags.Args(), " "))
	}
	if (o.tlsCert == "") != (o.tlsKey == "") {
		return nil, errors.New("--tls-cert and --tls-key go together")
	}
	if o.password != "" && o.passwordFile != "" {
		return nil, errors.New("give --password or --password-file, not both")
	}
	for name, quota := range o.quotas {
		if !slices.Contains(nbisim.QuotaNames, name) || quota < 0 {
			return nil, fmt.Errorf("--quota %s=%d: want one of OSM's quota names and a count of 0 or more", name, quota)
		}
	}
	if _, known := nbisim.LCMProfiles[o.lcmProfile]; o.lcmProfile != "" && !known {
		return nil, fmt.Errorf("--lcm-profile %q: want one of %s", o.lcmProfile, strings.Join(slices.Sorted(maps.Keys(nbisim.LCMProfiles)), ", "))
	}
	if o.requestLogSize <= 0 {
		return nil, errors.New("--request-log-size must be positive")
	}
	if o.operationDelay < 0 || o.autoremove < 0 || o.tokenLifetime <= 0 {
		return nil, errors.New("--operation-delay and --autoremove-delay must not be negative, --token-lifetime must be positive")
	}
	return o, nil
}

// run serves the simulator until ctx is done.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseOptions(args, stderr)
	if err != nil {
		return err
	}
	cfg, err := o.config(stdout)
	if err != nil {
		return err
	}
	sim := nbisim.New(cfg)
	if o.operationDelay == 0 {
		sim.SetOperationDelay(0)
	}

	listener, err := net.Listen("tcp", o.listen)
	if err != nil {
		return err
	}
	server := &http.Server{Handler: sim, ReadHeaderTimeout: 10 * time.Second}
	scheme := "http"
	if o.tlsCert != "" {
		scheme = "https"
	}
	base := fmt.Sprintf("%s://%s", scheme, listener.Addr())
	fmt.Fprintf(stdout, "osm-nbi-sim: serving the OSM NBI at %s/osm (control API at %s/sim/v1), user %q, project %q\n",
		base, base, cfg.Username, cfg.Project)

	served := make(chan error, 1)
	go func() {
		if o.tlsCert != "" {
			served <- server.ServeTLS(listener, o.tlsCert, o.tlsKey)
		} else {
			served <- server.Serve(listener)
		}
	}()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := server.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	fmt.Fprintln(stdout, "osm-nbi-sim: stopped")
	return nil
}

// config makes the simulator's configuration, logging one line per request
// to out; the request log never holds a token.
func (o *options) config(out io.Writer) (nbisim.Config, error) {
	password := o.password
	if o.passwordFile != "" {
		data, err := os.ReadFile(o.passwordFile)
		if err != nil {
			return nbisim.Config{}, fmt.Errorf("--password-file: %w", err)
		}
		password = strings.TrimRight(string(data), "\r\n")
		if password == "" {
			return nbisim.Config{}, fmt.Errorf("--password-file %s: the file is empty", o.passwordFile)
		}
	}
	seed, err := o.readSeed()
	if err != nil {
		return nbisim.Config{}, err
	}
	accounts, err := o.vimAccountList(seed)
	if err != nil {
		return nbisim.Config{}, err
	}
	charts, err := o.chartCatalog(seed)
	if err != nil {
		return nbisim.Config{}, err
	}
	cfg := nbisim.Config{
		Username:        o.username,
		Password:        password,
		Project:         o.project,
		TokenLifetime:   o.tokenLifetime,
		OperationDelay:  o.operationDelay,
		AutoremoveDelay: o.autoremove,
		VIMAccounts:     accounts,
		Charts:          charts,
		Seed:            o.seed,
		Quotas:          o.quotas,
		RequestLogSize:  o.requestLogSize,
		OnRequest: func(r nbisim.RequestRecord) {
			fmt.Fprintf(out, "%s %s %s %d %s %dB\n",
				r.Time.UTC().Format(time.RFC3339Nano), r.Method, r.Path, r.Status, r.Duration.Round(time.Microsecond), r.BytesSent)
		},
	}
	if profile, ok := nbisim.LCMProfiles[o.lcmProfile]; ok {
		profile.Apply(&cfg)
	}
	return cfg, nil
}

// chartCatalog is the seed file's charts and the --chart flags; nil (the simulator's default
// catalog) when neither names one.
func (o *options) chartCatalog(seed *seedFile) (nbisim.ChartCatalog, error) {
	entries := slices.Concat(seed.Charts, o.charts)
	if len(entries) == 0 {
		return nil, nil
	}
	catalog := nbisim.ChartCatalog{}
	for _, entry := range entries {
		if err := catalog.AddChart(entry); err != nil {
			return nil, err
		}
	}
	return catalog, nil
}

// readSeed reads the seed file, if any.
func (o *options) readSeed() (*seedFile, error) {
	if o.seedFile == "" {
		return &seedFile{}, nil
	}
	return readSeedFile(o.seedFile)
}

func (o *options) vimAccountList(seed *seedFile) ([]nbisim.VIMAccount, error) {
	var accounts []nbisim.VIMAccount
	for i, account := range seed.VIMAccounts {
		if account.Name == "" {
			return nil, fmt.Errorf("seed file %s: vimAccounts[%d].name is missing", o.seedFile, i)
		}
		accounts = append(accounts, nbisim.VIMAccount{
			Name: account.Name, Type: account.Type, NoK8sCluster: account.K8sCluster != nil && !*account.K8sCluster,
		})
	}
	for _, flagValue := range o.vimAccounts {
		name, option, hasOption := strings.Cut(flagValue, ":")
		if name == "" || hasOption && option != "nok8s" {
			return nil, fmt.Errorf("--vim-account %q: want NAME or NAME:nok8s", flagValue)
		}
		accounts = append(accounts, nbisim.VIMAccount{Name: name, NoK8sCluster: hasOption})
	}
	if len(accounts) == 0 {
		accounts = []nbisim.VIMAccount{{Name: "vim1"}}
	}
	return accounts, nil
}

// seedFile is the --seed-file format.
type seedFile struct {
	VIMAccounts []struct {
		Name string `yaml:"name"`
		Type string `yaml:"type"`
		// K8sCluster says whether the account has a Kubernetes cluster; default true.
		K8sCluster *bool `yaml:"k8sCluster"`
	} `yaml:"vimAccounts"`
	// Charts are REPO/CHART:VERSION entries, as --chart takes them.
	Charts []string `yaml:"charts"`
}

func readSeedFile(path string) (*seedFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--seed-file: %w", err)
	}
	var seed seedFile
	decoder := yaml.NewDecoder(bytes.NewReader(data))
	decoder.KnownFields(true)
	if err := decoder.Decode(&seed); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("seed file %s: %w", path, err)
	}
	return &seed, nil
}
