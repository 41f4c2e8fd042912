// Package osmconn holds the OSM connections of the manager: the NBI client of each OsmCluster,
// built from its Secrets and shared by both reconcilers (Pool), the poll schedule learnt from
// how long each OSM runs its operations, and the poll board that joins the operation polls of
// the OsmDeployments of one OsmCluster into one request per tick. It knows no reconciler: the
// controller and the command line tool both use it.
package osmconn

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/engine"
	"github.com/osmops/osmops/internal/osm"
)

// Connection is one OsmCluster's NBI client, shared by every reconcile that uses it, so that
// one token serves all of them and the bound on requests in flight holds across them.
type Connection struct {
	NBI engine.OSM
	// Parallelism bounds the NS operations one apply sends at once.
	Parallelism int
	// Fingerprint identifies the settings and credentials the client was built with; a new one
	// means the client must be rebuilt.
	Fingerprint string

	// PollOrigin, when the connection was built, places its poll ticks (PollSchedule.onTick).
	PollOrigin time.Time

	// durations is how long this OSM ran the operations seen end: the poll schedule's hints
	// (pollschedule.go), dropped with the connection.
	durations operationDurations
	// polls joins the operation polls of the OsmDeployments into one request per tick
	// (pollboard.go); requestTimeout is the NBI client's.
	polls          operationPolls
	requestTimeout time.Duration

	// checked is set once the OsmCluster reconciler has checked OSM with this client: a client
	// built by anyone (after a restart, a new Secret) is checked at the OsmCluster's next reconcile.
	checked atomic.Bool
}

// Checked tells whether the OsmCluster reconciler has checked OSM with this client.
func (c *Connection) Checked() bool { return c.checked.Load() }

// MarkChecked records that the OsmCluster reconciler checked OSM with this client.
func (c *Connection) MarkChecked() { c.checked.Store(true) }

// pollTimeout bounds a request of the poll board, which no reconcile's context cancels.
func (c *Connection) pollTimeout() time.Duration {
	timeout := c.requestTimeout
	if timeout <= 0 {
		timeout = osm.DefaultTimeout
	}
	return pollRequestTimeouts * timeout
}

// Error is why an OsmCluster cannot be connected to that a person must fix: a
// Secret or a key missing, a CA bundle that holds no certificate. Its message names Secrets,
// never their content.
type Error struct {
	// Reason is the OsmCluster's Ready reason (SecretNotFound, SecretKeyMissing, InvalidCA).
	Reason  string
	Message string
	// Gone says that the OsmCluster or its namespace is being deleted, so that what is missing
	// will not come back, and that the pool had no client to go on with.
	Gone bool
}

func (e *Error) Error() string { return e.Message }

// DefaultSecretPollInterval is how often Secrets are read again by default.
const DefaultSecretPollInterval = 30 * time.Second

// Pool holds the NBI client of each OsmCluster for both reconcilers. Whichever needs a
// client first builds it from the OsmCluster and its Secrets, so that no reconciler depends on
// another having run in this process (a restarted manager; a deleting OsmCluster, whose own
// reconciler no longer connects). A client is rebuilt when the OsmCluster's settings or its
// Secrets change.
//
// The credentials Secrets are not watched (the operator caches no Secret's data): Get reads them
// again when it last read them longer than SecretMaxAge ago, and Refresh always does.
//
// While an OsmCluster or its namespace is being deleted, a Secret that is gone does not take its
// client away: deleting a namespace deletes its Secrets at once, and the OsmDeployments still
// have NS instances to terminate. A Secret found gone otherwise drops the client: the tenant
// took the credentials away.
type Pool struct {
	// Reader reads the Secrets, and the OsmCluster when a Secret is gone, past any cache: the
	// operator caches no Secret's data, and a cached OsmCluster may not show its deletion yet.
	Reader client.Reader
	// ClientOptions are added to every NBI client (tests inject transports and clocks).
	ClientOptions []osm.Option
	// Metrics records the requests of every NBI client, labelled by OsmCluster (none when nil).
	Metrics *osm.Metrics
	// MaxRequestTimeout caps the NBI request timeout an OsmCluster asks for (none when 0).
	MaxRequestTimeout time.Duration
	// SecretMaxAge is how long Get uses the Secrets it read without reading them again
	// (DefaultSecretPollInterval when 0).
	SecretMaxAge time.Duration

	mu    sync.Mutex
	slots map[types.NamespacedName]*poolSlot
	// logins bounds the failed logins of every client of the pool, per OSM user: OSM locks a
	// user after a few, whichever OsmClusters sent them.
	logins osm.LoginBudget
}

// poolSlot is the connection of one OsmCluster; its lock serialises building it, so that two
// reconciles never build two clients of one OsmCluster.
type poolSlot struct {
	mu   sync.Mutex
	conn *Connection
	// settings digests the OsmCluster's spec the connection was built from; readAt is when its
	// Secrets were last read.
	settings string
	readAt   time.Time
}

// Get returns the connection of the OsmCluster, building it, or building it again when its
// settings or (read at most SecretMaxAge ago) its Secrets changed. A *Error says what
// a person must fix; other errors are transient.
func (p *Pool) Get(ctx context.Context, cluster *gitopsv1alpha1.OsmCluster) (*Connection, error) {
	maxAge := p.SecretMaxAge
	if maxAge <= 0 {
		maxAge = DefaultSecretPollInterval
	}
	return p.get(ctx, cluster, maxAge)
}

// Refresh is Get, reading the Secrets now.
func (p *Pool) Refresh(ctx context.Context, cluster *gitopsv1alpha1.OsmCluster) (*Connection, error) {
	return p.get(ctx, cluster, 0)
}

// Evict forgets the connection of an OsmCluster (deleted, or its Secret gone).
func (p *Pool) Evict(cluster types.NamespacedName) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.slots, cluster)
}

func (p *Pool) slot(key types.NamespacedName) *poolSlot {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.slots == nil {
		p.slots = map[types.NamespacedName]*poolSlot{}
	}
	s, ok := p.slots[key]
	if !ok {
		s = &poolSlot{}
		p.slots[key] = s
	}
	return s
}

func (p *Pool) get(ctx context.Context, cluster *gitopsv1alpha1.OsmCluster, maxAge time.Duration) (*Connection, error) {
	key := client.ObjectKeyFromObject(cluster)
	s := p.slot(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	settings := settingsDigest(cluster)
	if s.conn != nil && s.settings == settings && maxAge > 0 && time.Since(s.readAt) < maxAge {
		return s.conn, nil
	}
	creds, ca, err := readSecrets(ctx, p.Reader, cluster)
	if err != nil {
		var missing *Error
		if !errors.As(err, &missing) {
			return nil, err
		}
		missing.Gone = p.deleting(ctx, cluster)
		if missing.Gone && s.conn != nil && s.settings == settings {
			// The Secret went with its namespace: the OsmDeployments clean up with the client
			// built from it. It is not read again before SecretMaxAge.
			s.readAt = time.Now()
			return s.conn, nil
		}
		s.conn = nil
		return nil, err
	}
	s.readAt = time.Now()
	fingerprint := connectionFingerprint(cluster, creds, ca)
	if s.conn != nil && s.conn.Fingerprint == fingerprint {
		s.settings = settings
		return s.conn, nil
	}
	nbi, err := p.newClient(cluster, creds, ca)
	if err != nil {
		s.conn = nil
		return nil, &Error{Reason: gitopsv1alpha1.InvalidCASecretReason, Message: err.Error()}
	}
	s.conn = &Connection{NBI: nbi, Parallelism: cluster.GetMaxConcurrentRequests(), Fingerprint: fingerprint,
		PollOrigin: time.Now(), requestTimeout: p.requestTimeout(cluster)}
	s.settings = settings
	return s.conn, nil
}

// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get

// deleting tells whether the OsmCluster is going away, as the API server says: it is being
// deleted (or is gone), or its namespace is. A namespace is marked Terminating before any of
// its objects is deleted, so that a Secret deleted with its namespace is never taken for one a
// person removed, whatever order the namespace's objects go in.
func (p *Pool) deleting(ctx context.Context, cluster *gitopsv1alpha1.OsmCluster) bool {
	if !cluster.DeletionTimestamp.IsZero() {
		return true
	}
	namespace := &corev1.Namespace{}
	if err := p.Reader.Get(ctx, types.NamespacedName{Name: cluster.Namespace}, namespace); err == nil && !namespace.DeletionTimestamp.IsZero() {
		return true
	}
	current := &gitopsv1alpha1.OsmCluster{}
	err := p.Reader.Get(ctx, client.ObjectKeyFromObject(cluster), current)
	if apierrors.IsNotFound(err) {
		return true
	}
	return err == nil && !current.DeletionTimestamp.IsZero()
}

// readSecrets reads the credentials and the optional CA bundle of an OsmCluster. A
// *Error says which Secret or key is missing.
func readSecrets(ctx context.Context, reader client.Reader, obj *gitopsv1alpha1.OsmCluster) (osm.Credentials, []byte, error) {
	creds := osm.Credentials{Project: obj.GetProject()}
	secret, err := readSecret(ctx, reader, obj.Namespace, obj.Spec.CredentialsSecretRef.Name,
		gitopsv1alpha1.UsernameSecretKey, gitopsv1alpha1.PasswordSecretKey)
	if err != nil {
		return creds, nil, err
	}
	creds.Username = string(secret.Data[gitopsv1alpha1.UsernameSecretKey])
	creds.Password = string(secret.Data[gitopsv1alpha1.PasswordSecretKey])
	if obj.Spec.CASecretRef == nil {
		return creds, nil, nil
	}
	caSecret, err := readSecret(ctx, reader, obj.Namespace, obj.Spec.CASecretRef.Name, gitopsv1alpha1.CASecretKey)
	if err != nil {
		return creds, nil, err
	}
	return creds, caSecret.Data[gitopsv1alpha1.CASecretKey], nil
}

// readSecret gets a Secret (never cached: the operator may only `get` Secrets) and checks that
// it has the keys.
func readSecret(ctx context.Context, reader client.Reader, namespace, name string, keys ...string) (*corev1.Secret, error) {
	secret := &corev1.Secret{}
	if err := reader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, &Error{Reason: gitopsv1alpha1.SecretNotFoundReason,
				Message: fmt.Sprintf("Secret %s/%s not found", namespace, name)}
		}
		return nil, fmt.Errorf("reading Secret %s/%s: %w", namespace, name, err)
	}
	var missing []string
	for _, key := range keys {
		if len(secret.Data[key]) == 0 {
			missing = append(missing, key)
		}
	}
	if len(missing) > 0 {
		return nil, &Error{Reason: gitopsv1alpha1.SecretKeyMissingReason,
			Message: fmt.Sprintf("Secret %s/%s has no %s", namespace, name, strings.Join(missing, " or "))}
	}
	return secret, nil
}

func (p *Pool) newClient(obj *gitopsv1alpha1.OsmCluster, creds osm.Credentials, ca []byte) (*osm.Client, error) {
	options := []osm.Option{
		osm.WithTimeout(p.requestTimeout(obj)),
		osm.WithMaxConcurrentRequests(obj.GetMaxConcurrentRequests()),
		osm.WithInsecureSkipTLSVerify(obj.Spec.InsecureSkipTLSVerify),
		osm.WithMetrics(p.Metrics, obj.Namespace+"/"+obj.Name),
		osm.WithLoginBudget(&p.logins, osm.LoginHolder{Namespace: obj.Namespace, Name: obj.Name}),
		osm.WithAuditCluster(obj.Namespace + "/" + obj.Name),
	}
	if ca != nil {
		options = append(options, osm.WithCABundle(ca))
	}
	return osm.NewClient(obj.Spec.URL, creds, append(options, p.ClientOptions...)...)
}

// requestTimeout is the OsmCluster's NBI request timeout, within the manager's cap.
func (p *Pool) requestTimeout(obj *gitopsv1alpha1.OsmCluster) time.Duration {
	if p.MaxRequestTimeout > 0 {
		return min(obj.GetTimeout(), p.MaxRequestTimeout)
	}
	return obj.GetTimeout()
}

// settingsDigest digests what a client is built from in the OsmCluster's spec: a change of it
// makes Get read the Secrets at once.
func settingsDigest(obj *gitopsv1alpha1.OsmCluster) string {
	ca := ""
	if obj.Spec.CASecretRef != nil {
		ca = obj.Spec.CASecretRef.Name
	}
	return fmt.Sprint(obj.Spec.URL, "\x00", obj.GetProject(), "\x00", obj.Spec.CredentialsSecretRef.Name, "\x00", ca, "\x00",
		obj.Spec.InsecureSkipTLSVerify, obj.GetTimeout(), obj.GetMaxConcurrentRequests())
}

// connectionFingerprint digests everything an NBI client is built from; the credentials enter
// it only through a hash, so that it can be compared without keeping them in clear.
func connectionFingerprint(obj *gitopsv1alpha1.OsmCluster, creds osm.Credentials, ca []byte) string {
	h := sha256.New()
	for _, part := range []string{
		obj.Spec.URL, creds.Project, creds.Username, creds.Password, string(ca),
		fmt.Sprint(obj.Spec.InsecureSkipTLSVerify, obj.GetTimeout(), obj.GetMaxConcurrentRequests()),
	} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}
