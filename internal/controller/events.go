package controller

import (
	"fmt"
	"maps"
	"strconv"
	"sync"

	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	kuberecorder "k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/printable"
)

// Flux's event metadata keys for osmops' kinds. notification-controller reads only the keys
// prefixed with the group of the event's object (and forwards them without the prefix), as it
// does kustomize-controller's "kustomize.toolkit.fluxcd.io/revision".
var (
	// eventRevisionKey holds the source revision an OsmDeployment's event is about: Git commit
	// status providers report on it, and an Alert's event key includes it.
	eventRevisionKey = gitopsv1alpha1.GroupVersion.Group + "/" + eventv1.MetaRevisionKey
	// eventTokenKey holds the OsmDeployment's generation: notification-controller drops an event
	// repeated within its rate-limit interval (same object, message, revision and token), and a
	// spec change (values, force, suspend) that repeats a message is news. helm-controller puts a
	// digest of its release's configuration there for the same reason.
	eventTokenKey = gitopsv1alpha1.GroupVersion.Group + "/" + eventv1.MetaTokenKey
)

// deploymentEvents writes every event of both reconcilers, so that no call site has to: it
// escapes the control characters of each message (what OSM and Git put in it must not act on
// a terminal), and adds Flux's metadata to an OsmDeployment's events: the revision is the one
// last attempted, which every reconcile step sets before it reports on that revision. A caller
// reporting on another revision (one not yet attempted) passes it with AnnotatedEventf, and
// that one is kept.
type deploymentEvents struct {
	kuberecorder.EventRecorder
	// secrets masks the values from Secrets in an OsmDeployment's events (nil: none).
	secrets *secretValues
}

func (r deploymentEvents) Event(object runtime.Object, eventtype, reason, message string) {
	r.AnnotatedEventf(object, nil, eventtype, reason, "%s", message)
}

func (r deploymentEvents) Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...any) {
	r.AnnotatedEventf(object, nil, eventtype, reason, messageFmt, args...)
}

func (r deploymentEvents) AnnotatedEventf(object runtime.Object, annotations map[string]string, eventtype, reason, messageFmt string, args ...any) {
	message := fmt.Sprintf(messageFmt, args...)
	if obj, ok := object.(*gitopsv1alpha1.OsmDeployment); ok {
		metadata := map[string]string{eventTokenKey: strconv.FormatInt(obj.Generation, 10)}
		if revision := obj.Status.LastAttemptedRevision; revision != "" {
			metadata[eventRevisionKey] = revision
		}
		maps.Copy(metadata, annotations)
		annotations = metadata
		message = r.secrets.mask(client.ObjectKeyFromObject(obj), message)
	}
	r.EventRecorder.AnnotatedEventf(object, annotations, eventtype, reason, "%s", printable.String(message))
}

// revisionEvent is the metadata of an event about revision rather than the one last attempted.
func revisionEvent(revision string) map[string]string {
	return map[string]string{eventRevisionKey: revision}
}

// secretValues holds, per OsmDeployment being reconciled, a mask (gitops.Mask) of every Secret
// value its reconcile read: the variables of spec.postBuild.substituteFrom and each Secret
// valuesFrom read (gitops.SecretTexts). The conditions, history, events and logs written about
// it have them masked, whatever step quoted them (a problem, a reference OSM lacks, OSM's
// message on a failed upgrade). Each reconcile builds its mask again from what it reads (the
// revision and its values are preconditions of every reconcile that talks to OSM), so that
// nothing depends on a value held from before (a restart forgets them all), and drops it when
// it ends: no Secret's data outlives the reconcile that read it. A mask is bounded
// (gitops.MaxMaskBytes): a reconcile whose Secrets pass it goes no further.
type secretValues struct{ byObject sync.Map } // types.NamespacedName -> *lockedMask

// lockedMask is one OsmDeployment's mask: its reconcile and the events about it share it.
type lockedMask struct {
	sync.Mutex
	mask gitops.Mask
}

// add adds values to what is masked for key until forget; past gitops.MaxMaskBytes it returns
// a *gitops.MaskTooLargeError (what it took of values is still masked).
func (s *secretValues) add(key types.NamespacedName, values []string) error {
	if len(values) == 0 {
		return nil
	}
	entry, _ := s.byObject.LoadOrStore(key, &lockedMask{})
	locked := entry.(*lockedMask)
	locked.Lock()
	defer locked.Unlock()
	return locked.mask.Add(values)
}

func (s *secretValues) forget(key types.NamespacedName) { s.byObject.Delete(key) }

// mask masks the secret values of the object key in text.
func (s *secretValues) mask(key types.NamespacedName, text string) string {
	if s == nil {
		return text
	}
	entry, found := s.byObject.Load(key)
	if !found {
		return text
	}
	locked := entry.(*lockedMask)
	locked.Lock()
	defer locked.Unlock()
	return locked.mask.Apply(text)
}

// maskConditions masks the secret values of obj in its conditions' messages.
func (s *secretValues) maskConditions(obj *gitopsv1alpha1.OsmDeployment) {
	key := client.ObjectKeyFromObject(obj)
	for i := range obj.Status.Conditions {
		obj.Status.Conditions[i].Message = s.mask(key, obj.Status.Conditions[i].Message)
	}
}

// maskHistory masks the secret values of obj in the messages of its status.history and the
// reasons of its inventory: OSM may quote a value in its answer.
func (s *secretValues) maskHistory(obj *gitopsv1alpha1.OsmDeployment) {
	key := client.ObjectKeyFromObject(obj)
	if obj.Status.Inventory != nil {
		for i := range obj.Status.Inventory.NsInstances {
			entry := &obj.Status.Inventory.NsInstances[i]
			entry.Reason = s.mask(key, entry.Reason)
		}
	}
	for i := range obj.Status.History {
		snapshot := &obj.Status.History[i]
		snapshot.Message = s.mask(key, snapshot.Message)
		for j := range snapshot.Operations {
			snapshot.Operations[j].Message = s.mask(key, snapshot.Operations[j].Message)
		}
	}
}

// maskError returns err with the secret values of the object key masked in its text, still
// wrapping err (a terminal error stays one); err itself when it shows none.
func (s *secretValues) maskError(key types.NamespacedName, err error) error {
	if err == nil {
		return nil
	}
	if masked := s.mask(key, err.Error()); masked != err.Error() {
		return &maskedError{text: masked, err: err}
	}
	return err
}

// maskedError is an error whose text has values from Secrets masked.
type maskedError struct {
	text string
	err  error
}

func (e *maskedError) Error() string { return e.text }
func (e *maskedError) Unwrap() error { return e.err }
