package engine

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"slices"

	"github.com/osmops/osmops/internal/gitops"
)

// Digest is "sha256:<hex>" of what the plan sends OSM, in the order it sends it: each package
// upload or mark (kind, descriptor id, content digest) and each NS action (what it does, to
// which instance, the digest of the declaration it carries, the KDU, chart or VNF it changes).
// Two applies of one digest sent the same changes; status.history and the trace name a plan by
// it. Values enter only through the declarations' digests, which are keyed when they hold a
// Secret's (gitops.NsInstance.Digest): the digest reveals none.
func (p *Plan) Digest() string {
	type sent struct {
		Action   string `json:"action"`
		Subject  string `json:"subject"`
		Digest   string `json:"digest,omitempty"`
		Member   string `json:"member,omitempty"`
		KDU      string `json:"kdu,omitempty"`
		Chart    string `json:"chart,omitempty"`
		VNF      string `json:"vnf,omitempty"`
		Force    bool   `json:"force,omitempty"`
		Rollback bool   `json:"rollback,omitempty"`
	}
	var all []sent
	for _, a := range p.Packages {
		action := "upload " + string(a.Package.Descriptor.Kind)
		if a.MarkOnly {
			action = "mark " + string(a.Package.Descriptor.Kind)
		}
		all = append(all, sent{Action: action, Subject: a.Package.Descriptor.ID, Digest: a.Package.Digest})
	}
	for _, group := range []struct {
		action  string
		actions []NsAction
	}{{"create", p.Creates}, {"upgrade", p.Upgrades}, {"move", p.PackageMoves}, {"delete", p.Deletes}} {
		for _, a := range group.actions {
			s := sent{Action: group.action, Subject: a.Name, Force: a.Force, Rollback: a.Rollback, Member: a.Member, KDU: a.KDU.Name, Chart: a.Chart}
			if group.action == "create" || group.action == "upgrade" {
				s.Digest = a.Instance.Digest()
			}
			if group.action == "move" {
				s.VNF = a.Change.VNFInstanceID
			}
			all = append(all, s)
		}
	}
	encoded, err := json.Marshal(all)
	if err != nil {
		panic(err) // strings and booleans always encode
	}
	sum := sha256.Sum256(encoded)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// ReferencesDigest is "sha256:<hex>" of what the revision's references are checked on
// (CheckReferences): each NS instance's name, NSD, VIM account, and VNFs with their KDUs'
// names, and each package's kind, descriptor id and content digest. Values and parameters do
// not enter: a revision that changes only them has the digest of the one before.
func ReferencesDigest(rev *gitops.Revision) string {
	h := sha256.New()
	// The fields go to the hash in blocks of about 4 kB, not one by one: a plan of 10,000
	// instances digests them all.
	scratch := make([]byte, 0, 8<<10)
	write := func(fields ...string) {
		for _, f := range fields {
			scratch = append(binary.AppendUvarint(scratch, uint64(len(f))), f...)
		}
		if len(scratch) >= 4<<10 {
			h.Write(scratch)
			scratch = scratch[:0]
		}
	}
	// rev.NsInstances are sorted by name (gitops.Revision).
	for _, ns := range rev.NsInstances {
		write("ns", ns.Name, ns.NsdName, ns.VimAccountName)
		for _, vnf := range ns.Members() {
			write("vnf", vnf.MemberVnfIndex)
			for _, kdu := range vnf.KDUs {
				write("kdu", kdu.Name)
			}
		}
	}
	packages := slices.Clone(rev.Packages)
	slices.SortFunc(packages, func(a, b gitops.Package) int { return cmp.Compare(a.Descriptor.ID, b.Descriptor.ID) })
	for _, pkg := range packages {
		write("package", string(pkg.Descriptor.Kind), pkg.Descriptor.ID, pkg.Digest)
	}
	h.Write(scratch)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
