package gitops

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"slices"
)

// Origin is one source of an NS instance's declaration, so that a change can be told by where
// it came from: its file in Git, a ConfigMap or Secret of a KDU's valuesFrom, a variable of
// spec.postBuild.
type Origin struct {
	// Name says where, for messages: "Git", "Secret ldap-admin", "ConfigMap ldap-values",
	// "variable DOMAIN". Never a value.
	Name string
	// Fingerprint changes when what the origin gives changes: a short hash of the file's
	// text, of a ConfigMap's or Secret's version (uid and resourceVersion, never its data), of
	// a variable's value, or of its Secret's version when it came from one.
	Fingerprint string
}

// OriginGit names the deployment file an instance is declared in.
const OriginGit = "Git"

// MaxOrigins bounds the origins an instance records (Git first, then by name): the
// inventory keeps their fingerprints for each instance. A change of an origin beyond them is
// told as a change in Git.
const MaxOrigins = 8

// fingerprintLength is the hex digits of a fingerprint: enough that two versions of one
// origin rarely share one (one in 16 million), few enough that the inventory keeps
// MaxOrigins of them for every instance.
const fingerprintLength = 6

// newOrigin fingerprints identity (a text, version or value) as origin name's.
func newOrigin(name, identity string) Origin {
	sum := sha256.Sum256([]byte(name + "\x00" + identity))
	return Origin{Name: name, Fingerprint: hex.EncodeToString(sum[:])[:fingerprintLength]}
}

// withOrigins returns the instance with more origins, each named once (the first wins), Git
// first then by name, at most MaxOrigins.
func (n NsInstance) withOrigins(more ...Origin) NsInstance {
	origins := slices.Concat(n.Origins, more)
	slices.SortStableFunc(origins, func(a, b Origin) int {
		return cmp.Or(-cmp.Compare(boolRank(a.Name == OriginGit), boolRank(b.Name == OriginGit)), cmp.Compare(a.Name, b.Name))
	})
	origins = slices.CompactFunc(origins, func(a, b Origin) bool { return a.Name == b.Name })
	n.Origins = origins[:min(len(origins), MaxOrigins)]
	return n
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}
