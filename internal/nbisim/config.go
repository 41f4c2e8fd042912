package nbisim

import (
	"context"
	"maps"
	"time"

	"github.com/osmops/osmops/internal/nbisim/python"
)

// Defaults for the zero fields of Config.
const (
	DefaultUsername       = "admin"
	DefaultPassword       = "admin"
	DefaultProject        = "admin"
	DefaultTokenLifetime  = time.Hour
	DefaultOperationDelay = 2 * time.Second
	DefaultRequestLogSize = 1000
	// DefaultVIMType is the vim_type of a seeded VIM account without one.
	DefaultVIMType = "openstack"
)

// Config sets up a simulated NBI. The zero value is usable: one user
// admin/admin in project admin, no VIM account.
type Config struct {
	// Username and Password are the only credentials the NBI accepts.
	Username string
	Password string
	// Project is the project's name; the project also gets a uuid, and a
	// token request may name it by either.
	Project string
	// ProjectID, when set, is that uuid: an endpoint that says it is another OSM's
	// project, as a hostile tenant's may. Default a new uuid.
	ProjectID string
	// TokenLifetime is how long a token stays valid.
	TokenLifetime time.Duration
	// OperationDelay is how long an LCM operation stays PROCESSING before it
	// completes. Zero means DefaultOperationDelay; SetOperationDelay can set
	// zero (operations then complete at the next request).
	OperationDelay time.Duration
	// PickupDelay is how long LCM takes to take up an operation the NBI
	// accepted (the Kafka message's way); until then the NS record does not
	// show it. Zero: LCM takes it up at once, seen from the next request on.
	PickupDelay time.Duration
	// PickupInterval is the least time between two operations LCM takes up: OSM 19's local
	// message bus (osm_common msglocal aioread) reads one message, then sleeps 2 s, so
	// operations accepted together are taken up one per 2 s. Zero: no such pacing.
	PickupInterval time.Duration
	// OperationDelays are how long LCM runs an operation of each type, by its
	// lcmOperationType ("instantiate", "action", "terminate", "update", "scale"); a type
	// it does not name runs OperationDelay.
	OperationDelays map[string]time.Duration
	// AutoremoveDelay is how long a terminated NS record stays (NOT_INSTANTIATED, its terminate
	// COMPLETED) before the NBI removes it: with autoremove, LCM only sends a "terminated"
	// message and the NBI's subscription thread deletes the record when it reads it
	// (subscriptions.py), about 2 s later on OSM 19 (DefaultAutoremoveDelay). Zero: removed
	// as the terminate completes.
	AutoremoveDelay time.Duration
	// QueuePollInterval and QueueTimeout are how often LCM looks again
	// whether the operations accepted before one on the same NS have ended,
	// and how long it waits for them before failing it. Defaults
	// DefaultQueuePollInterval and DefaultQueueTimeout, LCM's.
	QueuePollInterval time.Duration
	QueueTimeout      time.Duration
	// Quotas are the project's quotas, by OSM's quota name (QuotaNSInstances...), as an
	// administrator sets them (POST or PATCH /admin/v1/projects): a topic without one has
	// DefaultQuota, as in OSM.
	Quotas map[string]int
	// VIMAccounts are created at start and after each Reset.
	VIMAccounts []VIMAccount
	// Clock tells the time; tests inject a fake one. Default time.Now.
	Clock func() time.Time
	// Sleep waits for injected latency; it must return early when ctx is
	// done. Default: a timer. Tests inject one that records the durations.
	Sleep func(ctx context.Context, d time.Duration)
	// Seed seeds the random source of the error-rate faults, so that a run
	// is reproducible.
	Seed uint64
	// RequestLogSize bounds the request log. Default DefaultRequestLogSize.
	RequestLogSize int
	// Charts is the catalog of the Helm repositories OSM knows: LCM's installs and upgrades
	// of a chart of a repository it lists fail, as Helm does, when the chart or the version
	// is missing, and a chart named without a version runs the newest. A repository it does
	// not list holds every chart at every version. Nil means DefaultChartCatalog.
	Charts ChartCatalog
	// OnRequest, when set, is called after each request (NBI and control
	// API) with what the request log records; the path never holds a token.
	OnRequest func(RequestRecord)
}

// VIMAccount is a VIM account to create at start.
type VIMAccount struct {
	Name string
	// Type is the vim_type; default DefaultVIMType.
	Type string
	// NoK8sCluster leaves the account without a Kubernetes cluster, so that
	// a KNF cannot be instantiated on it (the NBI answers 400).
	NoK8sCluster bool
}

func (c Config) withDefaults() Config {
	c.Quotas = maps.Clone(c.Quotas)
	c.OperationDelays = maps.Clone(c.OperationDelays)
	if c.Username == "" {
		c.Username = DefaultUsername
	}
	if c.Password == "" {
		c.Password = DefaultPassword
	}
	if c.Project == "" {
		c.Project = DefaultProject
	}
	if c.TokenLifetime <= 0 {
		c.TokenLifetime = DefaultTokenLifetime
	}
	if c.OperationDelay <= 0 {
		c.OperationDelay = DefaultOperationDelay
	}
	if c.QueuePollInterval <= 0 {
		c.QueuePollInterval = DefaultQueuePollInterval
	}
	if c.QueueTimeout <= 0 {
		c.QueueTimeout = DefaultQueueTimeout
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if c.Sleep == nil {
		c.Sleep = sleep
	}
	if c.Charts == nil {
		c.Charts = DefaultChartCatalog()
	}
	if c.RequestLogSize <= 0 {
		c.RequestLogSize = DefaultRequestLogSize
	}
	return c
}

func sleep(ctx context.Context, d time.Duration) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
	}
}

// epochTime is a time as the NBI writes it: seconds since 1970 as a Python
// float, so always with a fraction or ".0".
type epochTime float64

func epoch(t time.Time) epochTime {
	return epochTime(float64(t.UnixNano()) / 1e9)
}

// time is the instant the epoch time stands for, to the microsecond (what a float64 of
// today's epoch seconds holds).
func (e epochTime) time() time.Time {
	return time.Unix(0, int64(float64(e)*1e9)).Round(time.Microsecond)
}

// MarshalJSON writes the float as Python's json.dumps does.
func (e epochTime) MarshalJSON() ([]byte, error) {
	return []byte(python.FloatDumps(float64(e))), nil
}

// LCMTimes are how long LCM takes to take operations up and to run them: Config's
// PickupDelay, PickupInterval and OperationDelays.
type LCMTimes struct {
	PickupDelay, PickupInterval time.Duration
	OperationDelays             map[string]time.Duration
}

// Apply sets cfg's LCM times.
func (t LCMTimes) Apply(cfg *Config) {
	cfg.PickupDelay, cfg.PickupInterval, cfg.OperationDelays = t.PickupDelay, t.PickupInterval, maps.Clone(t.OperationDelays)
}

// LCMProfiles are the named LCM times of osm-nbi-sim's --lcm-profile.
var LCMProfiles = map[string]LCMTimes{
	// "real": OSM 19's LCM with real Helm as measured on ../shared/real-osm (docs/fidelity.md,
	// "LCM's times"). Its message bus takes one operation up every 2 s (1 s on average after
	// the NBI accepted it); a KDU upgrade then runs 3 s, an instantiate 6 s, a terminate 2.5 s:
	// one value change takes OSM 4.1 s to a client polling every 0.5 s, ten instantiations
	// 25.4 s.
	"real": {
		PickupDelay: time.Second, PickupInterval: 2 * time.Second,
		OperationDelays: map[string]time.Duration{
			opInstantiate: 6 * time.Second, opAction: 3 * time.Second, opTerminate: 2500 * time.Millisecond,
			opUpdate: 2 * time.Second, opScale: 3 * time.Second,
		},
	},
}
