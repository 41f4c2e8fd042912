// Package nameclaims holds the claims of NS instance names: which OsmDeployment may create or
// adopt a name on one OSM (Registry). The reconciler takes and releases them as it plans and
// acts; the preview of osmops diff only reads them. It knows no reconciler.
package nameclaims

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	"golang.org/x/sync/errgroup"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/engine"
	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/osm"
	"github.com/osmops/osmops/internal/osmconn"
)

// A claim says which OsmDeployment holds an NS instance name on one OSM: no two OsmDeployments
// create one name there, whichever process, shard or manager reconciles them. It is a Lease in
// the manager's namespace (ClaimsNamespace), named by a hash of (OSM identity, NS name), so the
// API server settles a race: of two creates of one claim, the second is refused (409). Its
// holderIdentity is the OsmDeployment's UID. An OsmDeployment holds a claim for every NS instance
// its inventory lists on its OSM (to create, running, orphaned or terminating): it takes them
// before its status lists a new name, so before any create is sent, and releases a name once
// the inventory no longer lists it (the instance is gone), and all of them when it is deleted.
// A claim whose holder no longer exists (deleted without its finalizer, or recreated with a
// new UID) is taken over by the next OsmDeployment that wants the name. Tenants have no rights
// in the manager's namespace: they can neither forge, steal nor free a claim. The markers in
// OSM stay the record of ownership; a claim guards what would be created or adopted without one.
const (
	claimNamePrefix = "osmops-claim-"
	managedByLabel  = "app.kubernetes.io/managed-by"
	// HolderLabel is the holder's UID, to list the claims of one OsmDeployment.
	HolderLabel = "gitops.osmops.io/claim-holder-uid"
	// HolderIndex indexes the cached claims by HolderLabel (HolderUID).
	HolderIndex = ".metadata.labels.claimHolder"
	// HolderAnnotation is the holder's namespace/name, to tell whether it still exists and
	// to say who holds a name.
	HolderAnnotation = "gitops.osmops.io/claim-holder"
	// OSMAnnotation and NsInstanceAnnotation are what the claim's name is a hash of.
	OSMAnnotation        = "gitops.osmops.io/claim-osm-identity"
	NsInstanceAnnotation = "gitops.osmops.io/claim-ns-instance"
	// claimsAtOnce bounds the claims one reconcile takes at once, and so, with --concurrent, the
	// manager's claim requests in flight (the API server's priority and fairness, or
	// --kube-api-qps where it has none, their rate).
	claimsAtOnce = 8
	// managedBy is the operator's name, as it is its field manager: only its claims are cached.
	managedBy = "osmops"
)

// Registry takes, reads and releases the claims of NS instance names.
type Registry struct {
	// Client reads the claims from the manager's cache (Cache) and writes them.
	Client client.Client
	// APIReader reads past the cache: a claim taken, a holder looked up (a cache that has not
	// seen a new holder yet would give its claim away).
	APIReader client.Reader
	// Namespace is the manager's, where the claims are (--claims-namespace).
	Namespace string
	// OwnerIdentity is the manager's part of the owner markers in OSM (--owner-identity).
	OwnerIdentity string
	// Connections reaches the OSMs of other OsmDeployments, to confirm their claims
	// (Confirmed); nil keeps every claim, as the preview does.
	Connections *osmconn.Pool
	// PastCache says that Client reads the API server itself (the command line's preview):
	// there is no cache index of the claims.
	PastCache bool
}

// Claims need get, list, create, update and delete on Leases in the manager's namespace only:
// the namespaced Role of leader election (config/rbac/leader_election_role.yaml, and the
// chart's), not the ClusterRole the +kubebuilder:rbac markers make, which would reach every
// namespace's Leases.

// Cache is what the manager's cache holds of Leases: the claims, in claimsNamespace only
// (where the Role lets the manager list and watch them), so that a plan reads the claims it
// checks without a request to the API server; of each, only what claims reads (cachedClaim).
func Cache(claimsNamespace string) (client.Object, cache.ByObject) {
	return &coordinationv1.Lease{}, cache.ByObject{
		Namespaces: map[string]cache.Config{claimsNamespace: {}},
		Label:      labels.SelectorFromSet(labels.Set{managedByLabel: managedBy}),
		Transform:  cachedClaim,
	}
}

// cachedClaim keeps of a claim what a plan reads of it (its holder) and what releasing it
// needs (its version, and its NS instance to name in an error): the cache holds one per NS
// instance of every inventory. Nothing writes a cached claim back: taking one reads it from the
// API server.
func cachedClaim(obj any) (any, error) {
	lease, ok := obj.(*coordinationv1.Lease)
	if !ok {
		return obj, nil
	}
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: lease.Namespace, Name: lease.Name, UID: lease.UID, ResourceVersion: lease.ResourceVersion,
			Labels: lease.Labels, Annotations: map[string]string{HolderAnnotation: lease.Annotations[HolderAnnotation],
				NsInstanceAnnotation: lease.Annotations[NsInstanceAnnotation]}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: lease.Spec.HolderIdentity},
	}, nil
}

// HolderUID is the HolderIndex key of a claim: its holder's UID.
func HolderUID(o client.Object) []string {
	return []string{o.GetLabels()[HolderLabel]}
}

// Name is the name of the claim of the NS instance name on the OSM of identity: a hash of
// a length-prefixed encoding of both, so that no two pairs share one.
func Name(identity, name string) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%d:%s%d:%s", len(identity), identity, len(name), name))
	return claimNamePrefix + hex.EncodeToString(sum[:])
}

// newClaim is the claim of name on the OSM of identity, held by obj.
func (r *Registry) newClaim(obj *gitopsv1alpha1.OsmDeployment, identity, name string) *coordinationv1.Lease {
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: r.Namespace, Name: Name(identity, name)}}
	holdClaim(lease, obj, identity, name)
	return lease
}

// holdClaim makes obj the holder of the claim lease.
func holdClaim(lease *coordinationv1.Lease, obj *gitopsv1alpha1.OsmDeployment, identity, name string) {
	lease.Labels = map[string]string{managedByLabel: managedBy, HolderLabel: string(obj.UID)}
	lease.Annotations = map[string]string{
		HolderAnnotation: client.ObjectKeyFromObject(obj).String(),
		OSMAnnotation:    identity, NsInstanceAnnotation: name,
	}
	lease.Spec = coordinationv1.LeaseSpec{HolderIdentity: new(string(obj.UID)), AcquireTime: &metav1.MicroTime{Time: time.Now()}}
}

// Held returns the NS instance names of the revision that another live OsmDeployment claims
// on the OSM of identity, with that OsmDeployment ("namespace/name"). It writes nothing: the
// reconcile takes its claims as it acts (Hold), the preview never. It reads the claims
// from the manager's cache (ClaimsCache), which may lag: a claim it misses is found when
// Hold creates its own, which the API server refuses.
func (r *Registry) Held(ctx context.Context, obj *gitopsv1alpha1.OsmDeployment, rev *gitops.Revision, identity string) (map[string]string, error) {
	held := map[string]string{}
	if identity == "" {
		return held, nil // logged in to no OSM: nothing is created there
	}
	mine, err := r.ownCachedClaims(ctx, obj)
	if err != nil {
		return nil, err
	}
	for _, ns := range rev.NsInstances {
		if _, ok := mine[Name(identity, ns.Name)]; ok {
			continue
		}
		lease := &coordinationv1.Lease{}
		switch err := r.Client.Get(ctx, types.NamespacedName{Namespace: r.Namespace, Name: Name(identity, ns.Name)}, lease); {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return nil, fmt.Errorf("reading the claim of NS instance %s: %w", ns.Name, err)
		}
		holder, live, err := r.claimHolder(ctx, lease)
		if err != nil {
			return nil, err
		}
		if live && holder != client.ObjectKeyFromObject(obj).String() {
			held[ns.Name] = holder
		}
	}
	return held, nil
}

// ownClaims returns the claims obj holds, on any OSM, by name, as the API server lists them: to
// take and release claims.
func (r *Registry) ownClaims(ctx context.Context, obj *gitopsv1alpha1.OsmDeployment) (map[string]coordinationv1.Lease, error) {
	return r.listClaims(ctx, r.APIReader, client.MatchingLabels{HolderLabel: string(obj.UID)})
}

// ownCachedClaims is ownClaims as the manager's cache holds them: to plan. It looks them up by
// HolderIndex: a label selector would match every cached claim of every OsmDeployment.
func (r *Registry) ownCachedClaims(ctx context.Context, obj *gitopsv1alpha1.OsmDeployment) (map[string]coordinationv1.Lease, error) {
	if r.PastCache {
		return r.ownClaims(ctx, obj)
	}
	return r.listClaims(ctx, r.Client, client.MatchingFields{HolderIndex: string(obj.UID)})
}

func (r *Registry) listClaims(ctx context.Context, reader client.Reader, holder client.ListOption) (map[string]coordinationv1.Lease, error) {
	var list coordinationv1.LeaseList
	if err := reader.List(ctx, &list, client.InNamespace(r.Namespace), holder); err != nil {
		return nil, fmt.Errorf("listing the claims of NS instance names: %w", err)
	}
	mine := make(map[string]coordinationv1.Lease, len(list.Items))
	for _, lease := range list.Items {
		mine[lease.Name] = lease
	}
	return mine, nil
}

// claimHolder returns the holder of a claim ("namespace/name") and whether it still exists:
// the OsmDeployment of that name, with the UID the claim holds. It asks the API server: a cache
// that has not seen a new holder yet would give its claim away.
func (r *Registry) claimHolder(ctx context.Context, lease *coordinationv1.Lease) (string, bool, error) {
	holder := lease.Annotations[HolderAnnotation]
	namespace, name, ok := strings.Cut(holder, "/")
	if !ok || lease.Spec.HolderIdentity == nil {
		return holder, false, nil // only the manager writes claims: a broken one holds nothing
	}
	obj := &gitopsv1alpha1.OsmDeployment{}
	switch err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, obj); {
	case apierrors.IsNotFound(err):
		return holder, false, nil
	case err != nil:
		return "", false, fmt.Errorf("looking up OsmDeployment %s, holder of a claim: %w", holder, err)
	}
	return holder, string(obj.UID) == *lease.Spec.HolderIdentity, nil
}

// Hold makes obj's claims those of the NS instances the inventory lists on the OSM of
// identity: it takes the missing ones (taking over those whose holder is gone) and releases the
// others, on this OSM and any other. It returns the names another live OsmDeployment holds,
// with it; those are not taken, and nothing is to be created or adopted under them.
func (r *Registry) Hold(ctx context.Context, obj *gitopsv1alpha1.OsmDeployment, identity string,
	inventory gitopsv1alpha1.Inventory) (map[string]string, error) {
	if identity == "" {
		return nil, fmt.Errorf("OsmCluster %s: not logged in to OSM, no NS instance name can be claimed", obj.Spec.ClusterRef.Name)
	}
	mine, err := r.ownClaims(ctx, obj)
	if err != nil {
		return nil, err
	}
	if err := r.releaseUnlisted(ctx, mine, identity, inventory); err != nil {
		return nil, err
	}
	// The claims are taken at once: each is a request of its own that the API server settles
	// alone, and in turn they made a plan of n new names wait n round trips.
	var mu sync.Mutex
	contested := map[string]string{}
	group, groupCtx := errgroup.WithContext(ctx)
	group.SetLimit(claimsAtOnce)
	for _, e := range inventory.NsInstances {
		if _, held := mine[Name(identity, e.Name)]; held {
			continue
		}
		group.Go(func() error {
			holder, err := r.Take(groupCtx, obj, identity, e.Name)
			if err != nil || holder == "" {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			contested[e.Name] = holder
			return nil
		})
	}
	if err := group.Wait(); err != nil {
		return nil, err
	}
	return contested, nil
}

// releaseUnlisted releases the claims of mine but those of the NS instances the inventory lists
// on the OSM of identity, and leaves in mine those it keeps.
func (r *Registry) releaseUnlisted(ctx context.Context, mine map[string]coordinationv1.Lease, identity string,
	inventory gitopsv1alpha1.Inventory) error {
	listed := make(map[string]bool, len(inventory.NsInstances))
	for _, e := range inventory.NsInstances {
		listed[Name(identity, e.Name)] = true
	}
	for name, lease := range mine {
		if listed[name] {
			continue
		}
		if err := r.releaseClaim(ctx, &lease); err != nil {
			return err
		}
		delete(mine, name)
	}
	return nil
}

// ReleaseEnded releases the claims of the NS instances whose operations ended by removing them
// from the inventory (terminated): when nothing else is left to do, no plan would. It reads the
// claims from the cache, unlike a plan, which takes claims: those of terminated instances were
// taken long before, and a claim the cache still shows once released is released again to no
// effect (releaseClaim). A List from the API server would match every claim's labels, and
// every Ready after operations would pay for it.
func (r *Registry) ReleaseEnded(ctx context.Context, obj *gitopsv1alpha1.OsmDeployment) error {
	identity, err := Identity(ctx, r.Client, types.NamespacedName{Namespace: obj.Namespace, Name: obj.Spec.ClusterRef.Name})
	if err != nil || identity == "" || obj.Status.Inventory == nil {
		return nil // not logged in to its OSM now: its claims are kept until it is
	}
	mine, err := r.ownCachedClaims(ctx, obj)
	if err != nil {
		return err
	}
	return r.releaseUnlisted(ctx, mine, identity, *obj.Status.Inventory)
}

// Take takes the claim of name on the OSM of identity for obj. It returns "" when obj holds
// it, or the OsmDeployment that does.
func (r *Registry) Take(ctx context.Context, obj *gitopsv1alpha1.OsmDeployment, identity, name string) (string, error) {
	claim := r.newClaim(obj, identity, name)
	err := r.Client.Create(ctx, claim)
	if !apierrors.IsAlreadyExists(err) {
		if err != nil {
			return "", fmt.Errorf("claiming NS instance %s: %w", name, err)
		}
		return "", nil
	}
	existing := &coordinationv1.Lease{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(claim), existing); err != nil {
		if apierrors.IsNotFound(err) {
			return "another OsmDeployment", nil // released meanwhile: taken at the next try
		}
		return "", fmt.Errorf("reading the claim of NS instance %s: %w", name, err)
	}
	if existing.Spec.HolderIdentity != nil && *existing.Spec.HolderIdentity == string(obj.UID) {
		return "", nil
	}
	holder, live, err := r.claimHolder(ctx, existing)
	if err != nil || live {
		return holder, err
	}
	// The holder is gone: the claim is taken over, on the version read, so that of two that
	// take it over at once the API server refuses the second.
	holdClaim(existing, obj, identity, name)
	if err := r.Client.Update(ctx, existing); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return "another OsmDeployment", nil
		}
		return "", fmt.Errorf("taking over the claim of NS instance %s from %s: %w", name, holder, err)
	}
	log.FromContext(ctx).Info("took over the claim of a deleted OsmDeployment", "nsInstance", name, "holder", holder)
	return "", nil
}

// releaseClaim deletes a claim, as the version read: one taken over meanwhile stays.
func (r *Registry) releaseClaim(ctx context.Context, lease *coordinationv1.Lease) error {
	err := r.Client.Delete(ctx, lease, client.Preconditions{UID: &lease.UID, ResourceVersion: &lease.ResourceVersion})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("releasing the claim of NS instance %s: %w", lease.Annotations[NsInstanceAnnotation], err)
	}
	return nil
}

// ReleaseAll releases every claim of obj, which is gone from OSM's point of view: deleted,
// whatever its deletionPolicy. A claim not released (the API server unreachable) holds no name
// for long: its holder is gone, and the next OsmDeployment that wants the name takes it over.
func (r *Registry) ReleaseAll(ctx context.Context, obj *gitopsv1alpha1.OsmDeployment) {
	mine, err := r.ownClaims(ctx, obj)
	for _, lease := range mine {
		err = errors.Join(err, r.releaseClaim(ctx, &lease))
	}
	if err != nil {
		log.FromContext(ctx).Error(err, "releasing the claims of a deleted OsmDeployment: their holder is gone, they will be taken over")
	}
}

// Confirmed keeps of the names another OsmDeployment holds (held: name -> holder) those
// whose claim obj's own OSM confirms. A claim goes by the OSM identity the holder's endpoint
// said at login, and an endpoint a tenant controls may say another's: that alone must not hold
// back obj's creates on the OSM obj really reaches. A claim holds when the holder's OsmCluster
// has obj's endpoint (written in any canonical way); when the NS instances obj observed on its
// own OSM show one of that name with the holder's marker; or when the holder's endpoint lists
// every VIM account id obj's OSM lists (ids OSM made up, which an endpoint that does not reach
// the project cannot know). Otherwise it does not, with a log line. nbi is obj's OSM; the
// preview, which has no pool of the holders' connections, keeps every claim.
func (r *Registry) Confirmed(ctx context.Context, obj *gitopsv1alpha1.OsmDeployment, nbi engine.OSM,
	observed *engine.Observed, held map[string]string) map[string]string {
	if len(held) == 0 || r.Connections == nil {
		return held
	}
	endpoint := r.clusterURL(ctx, obj)
	confirmed := make(map[string]string, len(held))
	for name, holder := range held {
		if markedIn(observed, name, holder, r.OwnerIdentity) || r.holderReaches(ctx, holder, endpoint, nbi, observed) {
			confirmed[name] = holder
			continue
		}
		log.FromContext(ctx).Info("a claim of an NS instance name is not confirmed by this OSM: its holder's endpoint does not reach it",
			"nsInstance", name, "holder", holder)
	}
	return confirmed
}

// holderReaches tells whether the OsmDeployment holder ("namespace/name") applies to the OSM
// of endpoint: through an OsmCluster of that endpoint, or one whose NBI lists every VIM account
// id that OSM (nbi, or what observed read of it) lists.
func (r *Registry) holderReaches(ctx context.Context, holder, endpoint string, nbi engine.OSM, observed *engine.Observed) bool {
	namespace, name, ok := strings.Cut(holder, "/")
	if !ok || endpoint == "" {
		return false
	}
	// Past the cache: the holder may be of another shard, which this manager does not watch.
	other := &gitopsv1alpha1.OsmDeployment{}
	cluster := &gitopsv1alpha1.OsmCluster{}
	if r.APIReader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, other) != nil ||
		r.APIReader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: other.Spec.ClusterRef.Name}, cluster) != nil {
		return false
	}
	if osm.SameEndpoint(cluster.Spec.URL, endpoint) {
		return true
	}
	mine := vimAccountIDs(ctx, nbi, observed)
	theirs, err := r.Connections.Get(ctx, cluster)
	if len(mine) == 0 || err != nil {
		return false
	}
	listed := vimAccountIDs(ctx, theirs.NBI, nil)
	for _, id := range mine {
		if !slices.Contains(listed, id) {
			return false
		}
	}
	return true
}

// vimAccountIDs are the VIM account ids an OSM lists: those observed read, else asked of nbi
// (nil when it does not answer).
func vimAccountIDs(ctx context.Context, nbi engine.OSM, observed *engine.Observed) []string {
	if observed != nil && len(observed.VIMAccounts) > 0 {
		return slices.Collect(maps.Values(observed.VIMAccounts))
	}
	vims, err := nbi.ListVIMAccounts(ctx)
	if err != nil {
		return nil
	}
	ids := make([]string, 0, len(vims))
	for _, vim := range vims {
		ids = append(ids, vim.ID)
	}
	return ids
}

// clusterURL is the NBI URL of obj's OsmCluster, "" when it cannot be read.
func (r *Registry) clusterURL(ctx context.Context, obj *gitopsv1alpha1.OsmDeployment) string {
	cluster := &gitopsv1alpha1.OsmCluster{}
	if r.Client.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: obj.Spec.ClusterRef.Name}, cluster) != nil {
		return ""
	}
	return cluster.Spec.URL
}

// markedIn tells whether observed holds an NS instance named name whose marker names holder
// ("namespace/name") of this manager.
func markedIn(observed *engine.Observed, name, holder, manager string) bool {
	if observed == nil {
		return false
	}
	for _, ns := range observed.NSInstances {
		if owner, ok := engine.ParseOwner(string(ns.AdditionalParamsForNs[engine.OwnerParam])); ok && ns.Name == name &&
			owner.Manager == manager && owner.String() == holder {
			return true
		}
	}
	return false
}

// View is what a plan of obj on the OSM nbi reaches is told of the claims: the names of the
// revision another OsmDeployment holds there (Held), as obj's OSM confirms them (Confirmed).
func (r *Registry) View(obj *gitopsv1alpha1.OsmDeployment, nbi engine.OSM) func(ctx context.Context, identity string,
	rev *gitops.Revision, observed *engine.Observed) (map[string]string, error) {
	return func(ctx context.Context, identity string, rev *gitops.Revision, observed *engine.Observed) (map[string]string, error) {
		held, err := r.Held(ctx, obj, rev, identity)
		if err != nil {
			return nil, err
		}
		return r.Confirmed(ctx, obj, nbi, observed, held), nil
	}
}

// Identity returns the identity of the OSM the OsmCluster cluster is logged in to
// (ClusterIdentity), read with reader.
func Identity(ctx context.Context, reader client.Reader, cluster types.NamespacedName) (string, error) {
	obj := &gitopsv1alpha1.OsmCluster{}
	if err := reader.Get(ctx, cluster, obj); err != nil {
		return "", err
	}
	return ClusterIdentity(obj), nil
}

// ClusterIdentity is the OSM project an OsmCluster is logged in to, as OSM said at login
// (status.osmIdentity), while it is Ready for its current spec; "" otherwise. It is what claims
// go by: an OsmCluster that never reached an OSM, or no longer does, claims nothing there, and
// two URLs of one OSM are one OSM.
func ClusterIdentity(obj *gitopsv1alpha1.OsmCluster) string {
	ready := conditions.Get(obj, meta.ReadyCondition)
	if ready == nil || ready.Status != metav1.ConditionTrue || ready.ObservedGeneration != obj.Generation {
		return ""
	}
	return obj.Status.OSMIdentity
}
