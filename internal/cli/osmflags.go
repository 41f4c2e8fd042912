package cli

import (
	"cmp"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/osmops/osmops/internal/osm"
)

// Environment variables of the OSM credentials, as the osm client reads them.
const (
	envUsername = "OSM_USERNAME"
	envPassword = "OSM_PASSWORD"
	envProject  = "OSM_PROJECT"
)

// osmFlags say how to reach an OSM NBI directly, without an OsmCluster.
type osmFlags struct {
	url      string
	username string
	password string
	project  string
	caFile   string
	insecure bool
	timeout  time.Duration
}

func (f *osmFlags) add(flags *pflag.FlagSet) {
	flags.StringVar(&f.url, "osm", "", "URL of the OSM NBI to check against (https://osm.example.com:9999)")
	flags.StringVar(&f.username, "username", "", "OSM user (default $"+envUsername+")")
	flags.StringVar(&f.password, "password", "", "OSM password (default $"+envPassword+", which keeps it out of the process list)")
	flags.StringVar(&f.project, "project", "", "OSM project (default $"+envProject+", else admin)")
	flags.StringVar(&f.caFile, "ca-file", "", "PEM bundle of the certificate authorities that sign the NBI's certificate (default: the system's)")
	flags.BoolVar(&f.insecure, "insecure-skip-tls-verify", false, "do not verify the NBI's TLS certificate (tests and demos only)")
	flags.DurationVar(&f.timeout, "osm-timeout", osm.DefaultTimeout, "bound on each NBI request")
}

// projectName is the OSM project of the flags: --project, else $OSM_PROJECT, else admin.
func (f *osmFlags) projectName() string {
	return cmp.Or(f.project, os.Getenv(envProject), "admin")
}

// client is an NBI client of the flags; nil without --osm.
func (f *osmFlags) client() (*osm.Client, error) {
	if f.url == "" {
		return nil, nil
	}
	creds := osm.Credentials{
		Username: cmp.Or(f.username, os.Getenv(envUsername)),
		Password: cmp.Or(f.password, os.Getenv(envPassword)),
		Project:  f.projectName(),
	}
	if creds.Username == "" || creds.Password == "" {
		return nil, fmt.Errorf("--osm needs credentials: --username and --password, or $%s and $%s", envUsername, envPassword)
	}
	options := []osm.Option{osm.WithTimeout(f.timeout), osm.WithInsecureSkipTLSVerify(f.insecure)}
	if f.caFile != "" {
		ca, err := os.ReadFile(f.caFile)
		if err != nil {
			return nil, fmt.Errorf("--ca-file: %w", err)
		}
		options = append(options, osm.WithCABundle(ca))
	}
	return osm.NewClient(f.url, creds, options...)
}
