package engine

import (
	"slices"
	"strings"

	"github.com/osmops/osmops/internal/gitops"
)

// reasonRequested is why a failed intent is sent again with no change: a reconcile request
// cleared its entry's digest (see the controller's withoutRetries).
const reasonRequested = "differ: sent again on a reconcile request"

// originsOf is what an inventory entry records of where the instance's declaration came from:
// the fingerprints of its origins (gitops.Origin), at most gitops.MaxOrigins.
func originsOf(ns gitops.NsInstance) string {
	fingerprints := make([]string, len(ns.Origins))
	for i, o := range ns.Origins {
		fingerprints[i] = o.Fingerprint
	}
	return strings.Join(fingerprints, " ")
}

// changeReason says where the declaration of ns changed since the instance last ran one in
// full (last.Origins): the origins whose fingerprints it did not record, by name ("changed
// in Secret ldap-admin"). What cannot be told (an entry recorded before origins were, an
// origin beyond gitops.MaxOrigins) is told as a change in Git, where the declaration is.
func changeReason(last InstanceRecord, ns gitops.NsInstance) string {
	if last.State == InstanceFailed && last.Digest == "" {
		return reasonRequested
	}
	if last.Origins == "" {
		return reasonChangedInGit
	}
	recorded := strings.Fields(last.Origins)
	var names []string
	for _, o := range ns.Origins {
		if !slices.Contains(recorded, o.Fingerprint) {
			names = append(names, o.Name)
		}
	}
	if len(names) == 0 {
		return reasonChangedInGit
	}
	if len(names) > 1 {
		names = append(names[:len(names)-2], names[len(names)-2]+" and "+names[len(names)-1])
	}
	return "changed in " + strings.Join(names, ", ")
}
