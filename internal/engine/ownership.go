package engine

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/osmops/osmops/internal/osm"
)

// OwnerParam is the key of additionalParamsForNs under which the operator records, in OSM
// itself, which OsmDeployment created an NS instance. OSM keeps the create request's NS
// parameters in the record (nsr.additionalParamsForNs) and returns them in every list, so the
// owner survives a lost status, a restore from backup, a restart and a move between shards. LCM
// reads these parameters only as values for NS-level charms, which KNF services do not have.
const OwnerParam = "osmops_owner"

// managerIdentity is the form of an owner identity: a DNS label that starts with a letter, so
// that a marker passes the NBI's query parser unchanged (see osm.ListNSInstancesByParam) and
// splits back unambiguously at its first two dots.
var managerIdentity = regexp.MustCompile(`^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$`)

// Owner is an OsmDeployment as every operator that drives one OSM can tell it apart: the
// identity of the operator installation (one per Kubernetes cluster, stable across restarts)
// and the OsmDeployment's namespace and name. An OsmDeployment recreated from its manifest is
// the same owner; one of another Kubernetes cluster never is.
type Owner struct {
	Manager   string
	Namespace string
	Name      string
}

// CheckManagerIdentity refuses an owner identity that a marker cannot carry.
func CheckManagerIdentity(identity string) error {
	if !managerIdentity.MatchString(identity) {
		return fmt.Errorf("owner identity %q must be a DNS label that starts with a letter (at most 63 characters of a-z, 0-9 and -)", identity)
	}
	return nil
}

// Marker is the value of OwnerParam that names the owner: "manager.namespace.name". A
// namespace is a DNS label, so the first two dots are the separators.
func (o Owner) Marker() string { return o.Manager + "." + o.Namespace + "." + o.Name }

// String names the owner in messages.
func (o Owner) String() string { return o.Namespace + "/" + o.Name }

// ParseOwner reads a marker; ok is false for a value the operator did not write.
func ParseOwner(marker string) (owner Owner, ok bool) {
	parts := strings.SplitN(marker, ".", 3)
	if len(parts) != 3 || !managerIdentity.MatchString(parts[0]) || parts[1] == "" || parts[2] == "" {
		return Owner{}, false
	}
	return Owner{Manager: parts[0], Namespace: parts[1], Name: parts[2]}, true
}

// ownerOf reads the owner an NS instance record carries.
func ownerOf(ns osm.NSInstance) (Owner, bool) {
	marker, found := ns.AdditionalParamsForNs[OwnerParam]
	if !found {
		return Owner{}, false
	}
	return ParseOwner(string(marker))
}

// Keys of a package's user data (osm.DescriptorAdmin.UserDefinedData) under which the operator
// records, beside OwnerParam, what it uploaded: the package's digest, and the revision OSM gave
// the upload. A revision that moved on since means someone uploaded the package outside Git.
const (
	PackageDigestParam   = "osmops_digest"
	PackageRevisionParam = "osmops_revision"
)

// packageMark is what a package's user data says of its last upload by an operator.
type packageMark struct {
	owner    Owner
	marked   bool
	digest   string
	revision int
}

func packageMarkOf(admin osm.DescriptorAdmin) packageMark {
	data := admin.UserDefinedData
	owner, marked := ParseOwner(string(data[OwnerParam]))
	revision, err := strconv.Atoi(string(data[PackageRevisionParam]))
	if !marked || err != nil {
		return packageMark{}
	}
	return packageMark{owner: owner, marked: true, digest: string(data[PackageDigestParam]), revision: revision}
}

// current tells whether OSM still has what the mark says was uploaded, with that digest.
func (m packageMark) current(digest string, admin osm.DescriptorAdmin) bool {
	return m.marked && m.digest == digest && m.revision == int(admin.Revision)
}

// PackageUserData is the user data that marks owner's upload of a package with digest, which
// OSM keeps as revision.
func PackageUserData(owner Owner, digest string, revision int) map[string]string {
	return map[string]string{OwnerParam: owner.Marker(), PackageDigestParam: digest, PackageRevisionParam: strconv.Itoa(revision)}
}

// OwnerOf returns the owner the NS instance id carries.
func (o *Observed) OwnerOf(id string) (Owner, bool) {
	r := o.instance(id)
	return r.owner, r.marked
}

// ForeignOwners lists the owners, other than self, that the observed NS instances and packages
// carry: the caller tells which of them still exist (Input.LiveOwners).
func (o *Observed) ForeignOwners(self Owner) []Owner {
	seen := map[Owner]bool{}
	var owners []Owner
	add := func(owner Owner, marked bool) {
		if marked && owner != self && !seen[owner] {
			seen[owner] = true
			owners = append(owners, owner)
		}
	}
	for _, r := range o.records {
		add(r.owner, r.marked)
	}
	for _, d := range o.NSDs {
		mark := packageMarkOf(d.Admin)
		add(mark.owner, mark.marked)
	}
	for _, d := range o.VNFDs {
		mark := packageMarkOf(d.Admin)
		add(mark.owner, mark.marked)
	}
	return owners
}
