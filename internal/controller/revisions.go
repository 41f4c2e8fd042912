package controller

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/fxamacker/cbor/v2"
	"golang.org/x/sync/singleflight"
	"k8s.io/apimachinery/pkg/types"

	"github.com/osmops/osmops/internal/engine"
	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/osmpkg"
)

// revisionCache keeps the validated revisions OsmDeployments apply, so that drift checks and
// operation polls do not download and parse their artifact again. There is one entry per
// artifact digest, options and substitution (revisionKey), shared by every OsmDeployment that
// reads the artifact so (a thousand OsmDeployments of one GitRepository: one download, one
// parse, one copy), with the OsmDeployments that use it: each uses one entry at most, the one
// of its last revision, and an entry goes with its last user. The entries are therefore at
// most the OsmDeployments of the process, whatever a tenant pushes.
//
// The revisions it hands out are shared: nobody changes them. Their packages carry no tarball,
// and the cache keeps none: withTarballs builds them from the artifact, fetched again, for the
// reconcile whose plan uploads them, and they go with that reconcile. So whatever OSM answers
// (one that never lets a plan run, or never takes an upload), the bytes held in memory are at
// most those of the reconciles uploading at that moment (--concurrent), never one per
// OsmDeployment. No correctness depends on what is kept: a process that lost it all loads the
// revision again.
type revisionCache struct {
	// fetch downloads the artifact at url, checks that it has digest, and unpacks it into dir
	// (an empty folder).
	fetch func(ctx context.Context, url, digest, dir string) error

	mu      sync.Mutex
	entries map[revisionKey]*revisionEntry
	// pins names the entry each OsmDeployment uses.
	pins map[types.NamespacedName]revisionKey
	// flights makes the loads, and the rebuilds, of one entry that reconciles need at once one:
	// they wait for it and share its outcome (and the first one's cancellation, as a failure
	// to try again).
	flights singleflight.Group
}

// revisionKey is what a revision depends on: the artifact's digest, and a digest of every
// option it is read with, the substitution included (newRevisionKey).
type revisionKey struct{ digest, options string }

// optionsEncoding encodes options canonically: RFC 8949's core deterministic CBOR (map entries
// sorted, nil told apart from empty), each struct field by name, strings as byte strings (so
// that no two strings, valid UTF-8 or not, encode alike, and a list of two suffixes never
// encodes as one suffix holding both).
var optionsEncoding = func() cbor.EncMode {
	opts := cbor.CoreDetEncOptions()
	opts.String = cbor.StringToByteString
	mode, err := opts.EncMode()
	if err != nil {
		panic(err) // fixed, valid options
	}
	return mode
}()

// newRevisionKey keys the revision of the artifact of digest read with opts: every field of
// opts, canonically encoded, enters it through a SHA-256, so that two OsmDeployments share a
// revision only when they read it with the same options, and the key never holds a Secret's
// value in clear.
func newRevisionKey(digest string, opts gitops.Options) revisionKey {
	encoded, err := optionsEncoding.Marshal(opts)
	if err != nil {
		panic(err) // strings, lists, maps and booleans always encode
	}
	sum := sha256.Sum256(encoded)
	return revisionKey{digest: digest, options: hex.EncodeToString(sum[:])}
}

func (k revisionKey) String() string {
	return k.digest + "\x00" + k.options
}

type revisionEntry struct {
	// revision is nil when the artifact is invalid.
	revision *gitops.Revision
	// invalid says what is wrong with the artifact. It is kept like a revision: the same bytes
	// read with the same options have the same problems, and an invalid revision pushed to a
	// thousand OsmDeployments is read once instead of once per worker round.
	invalid *gitops.ValidationError
	// url is where the artifact was last seen, to fetch it again to rebuild its packages.
	url string
	// users are the OsmDeployments that use the entry.
	users map[types.NamespacedName]bool
}

// load returns the revision of the artifact at url read with opts (key says which), and
// makes it the one user uses, instead of the one it used before; joined tells whether user did
// not use it already (its warnings are news to it). A *gitops.ValidationError is returned, and
// kept, for an invalid artifact; other errors are not kept: the next reconcile tries again.
func (c *revisionCache) load(ctx context.Context, user types.NamespacedName, key revisionKey, url string, opts gitops.Options) (
	rev *gitops.Revision, joined bool, err error) {
	c.mu.Lock()
	e, cached := c.entries[key]
	c.mu.Unlock()
	if !cached {
		// The flight adds the entry itself, and one that starts after another added it finds
		// it: however the reconciles interleave, an artifact is read once.
		result, err, _ := c.flights.Do("load "+key.String(), func() (any, error) {
			if e, cached := c.entryOf(key, nil); cached {
				return e, nil
			}
			fresh, err := c.read(ctx, url, key.digest, opts)
			if err != nil {
				return nil, err
			}
			e, _ := c.entryOf(key, fresh)
			return e, nil
		})
		if err != nil {
			return nil, false, err
		}
		e = result.(*revisionEntry)
	}
	return c.use(user, key, url, e)
}

// entryOf returns the entry of key, made of fresh when there is none and fresh is not nil.
func (c *revisionCache) entryOf(key revisionKey, fresh *revisionEntry) (*revisionEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if ok || fresh == nil {
		return e, ok
	}
	if c.entries == nil {
		c.entries, c.pins = map[revisionKey]*revisionEntry{}, map[types.NamespacedName]revisionKey{}
	}
	c.entries[key] = fresh
	return fresh, false
}

// use pins user to the entry of key: e, or, when its users all left since, an entry made
// again of e's revision.
func (c *revisionCache) use(user types.NamespacedName, key revisionKey, url string, e *revisionEntry) (
	rev *gitops.Revision, joined bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if current, ok := c.entries[key]; ok {
		e = current
	} else {
		e = &revisionEntry{revision: e.revision, invalid: e.invalid}
		c.entries[key] = e
	}
	e.url = url
	if previous, pinned := c.pins[user]; !pinned || previous != key {
		c.unpinLocked(user)
		c.pins[user] = key
		if e.users == nil {
			e.users = map[types.NamespacedName]bool{}
		}
		e.users[user] = true
		joined = true
	}
	if e.invalid != nil {
		return nil, joined, e.invalid
	}
	return e.revision, joined, nil
}

// read fetches the artifact and reads the revision in it, its tarballs apart.
func (c *revisionCache) read(ctx context.Context, url, digest string, opts gitops.Options) (*revisionEntry, error) {
	var rev *gitops.Revision
	err := c.inArtifact(ctx, url, digest, func(dir string) (err error) {
		rev, err = gitops.Load(dir, opts)
		return err
	})
	var invalid *gitops.ValidationError
	switch {
	case errors.As(err, &invalid):
		return &revisionEntry{invalid: invalid}, nil
	case err != nil:
		return nil, err
	}
	// Nobody else has the revision yet: its packages can lose their bytes in place.
	for i := range rev.Packages {
		rev.Packages[i].Tarball = nil
	}
	return &revisionEntry{revision: rev}, nil
}

// inArtifact fetches the artifact into a temporary folder for read, and removes it after.
func (c *revisionCache) inArtifact(ctx context.Context, url, digest string, read func(dir string) error) error {
	dir, err := os.MkdirTemp("", "osmops-artifact-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := c.fetch(ctx, url, digest, dir); err != nil {
		return err
	}
	return read(dir)
}

// last returns the valid revision the OsmDeployment uses, if any.
func (c *revisionCache) last(user types.NamespacedName) (*gitops.Revision, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key, ok := c.pins[user]
	if !ok || c.entries[key].revision == nil {
		return nil, false
	}
	return c.entries[key].revision, true
}

// forget drops the OsmDeployment's use of its entry, and the entry with its last user.
func (c *revisionCache) forget(user types.NamespacedName) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.unpinLocked(user)
}

func (c *revisionCache) unpinLocked(user types.NamespacedName) {
	key, ok := c.pins[user]
	if !ok {
		return
	}
	delete(c.pins, user)
	e := c.entries[key]
	delete(e.users, user)
	if len(e.users) == 0 {
		delete(c.entries, key)
	}
}

// withTarballs gives the uploads of plan, made from the revision user uses, the bytes of
// their packages, built from the artifact fetched again (each must build to the digest it
// had): once for the reconciles that need them at the same moment, and kept by none after.
// The revision is not changed: the plan's actions get copies of its packages.
func (c *revisionCache) withTarballs(ctx context.Context, user types.NamespacedName, plan *engine.Plan) error {
	c.mu.Lock()
	key, ok := c.pins[user]
	if !ok || c.entries[key].revision == nil {
		c.mu.Unlock()
		return fmt.Errorf("no valid revision loaded for OsmDeployment %s", user)
	}
	e := c.entries[key]
	url, packages := e.url, e.revision.Packages
	c.mu.Unlock()

	if !slices.ContainsFunc(plan.Packages, func(action engine.PackageAction) bool { return !action.MarkOnly }) {
		return nil
	}
	rebuilt, err, _ := c.flights.Do("rebuild "+key.String(), func() (any, error) { return c.rebuild(ctx, url, key.digest, packages) })
	if err != nil {
		return fmt.Errorf("building the packages again from the artifact: %w", err)
	}
	tarballs := rebuilt.(map[string][]byte)
	for i := range plan.Packages {
		action := &plan.Packages[i]
		if action.MarkOnly {
			continue
		}
		withBytes := *action.Package.Package
		withBytes.Tarball = tarballs[withBytes.Digest]
		action.Package.Package = &withBytes
	}
	return nil
}

// rebuild fetches the artifact again and builds its packages, as gitops.Load did.
func (c *revisionCache) rebuild(ctx context.Context, url, digest string, packages []gitops.Package) (map[string][]byte, error) {
	tarballs := make(map[string][]byte, len(packages))
	err := c.inArtifact(ctx, url, digest, func(dir string) error {
		for _, p := range packages {
			built, err := osmpkg.Build(filepath.Join(dir, filepath.FromSlash(p.Source)))
			switch {
			case err != nil:
				return fmt.Errorf("%s: %w", p.Source, err)
			case built.Digest != p.Digest:
				return fmt.Errorf("%s builds to %s, not to the %s validated", p.Source, built.Digest, p.Digest)
			}
			tarballs[p.Digest] = built.Tarball
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return tarballs, nil
}
