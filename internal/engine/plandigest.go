package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// Digest identifies the changes the plan sends to OSM: "sha256:<hex>" of its operations, in
// order, each by what it changes (a package's digest, an instance's declaration digest, OSM's
// ids), never by a value. Two reconciles that send the same changes have the same digest, so
// that an audit line names the plan its request belongs to.
func (p *Plan) Digest() string {
	type operation struct {
		Op     string `json:"op"`
		Name   string `json:"name"`
		ID     string `json:"id,omitempty"`
		Digest string `json:"digest,omitempty"`
		Member string `json:"member,omitempty"`
		KDU    string `json:"kdu,omitempty"`
		Chart  string `json:"chart,omitempty"`
		VNF    string `json:"vnf,omitempty"`
		Force  bool   `json:"force,omitempty"`
	}
	var operations []operation
	for _, action := range p.Packages {
		op := "upload " + string(action.Package.Descriptor.Kind)
		if action.MarkOnly {
			op = "mark " + string(action.Package.Descriptor.Kind)
		}
		operations = append(operations, operation{Op: op, Name: action.Package.Descriptor.ID, ID: action.ID, Digest: action.Package.Digest})
	}
	for _, action := range p.Creates {
		operations = append(operations, operation{Op: "create", Name: action.Name, Digest: action.Instance.Digest()})
	}
	for _, action := range p.Upgrades {
		operations = append(operations, operation{Op: "upgrade", Name: action.Name, ID: action.ID,
			Digest: action.Instance.Digest(), Member: action.Member, KDU: action.KDU.Name, Chart: action.Chart})
	}
	for _, action := range p.PackageMoves {
		operations = append(operations, operation{Op: "move", Name: action.Name, ID: action.ID,
			VNF: action.Change.VNFInstanceID, Digest: action.Change.VnfdID})
	}
	for _, action := range p.Deletes {
		operations = append(operations, operation{Op: "delete", Name: action.Name, ID: action.ID, Force: action.Force})
	}
	encoded, _ := json.Marshal(operations)
	sum := sha256.Sum256(encoded)
	return "sha256:" + hex.EncodeToString(sum[:])
}
