// Package osmpkg turns the source folder of an OSM package into the .tar.gz
// that OSM's north-bound interface (NBI) accepts, and checks such tarballs the
// way the NBI does on upload.
//
// A package source is a folder holding exactly one descriptor (a VNF/KNF
// descriptor with a top-level `vnfd` key or an NS descriptor with a top-level
// `nsd` key) directly inside it, plus any other files (Helm values, charts,
// scripts) in subfolders. Build packs it deterministically: the same files give
// the same bytes on any machine, so the tarball's digest tells whether a
// package changed.
//
// It imports no other osmops package and nothing of Kubernetes: internal/gitops, the client and
// the simulator all build on it.
package osmpkg

// Limits on a package, applied by both Build and Inspect so that a hostile
// repository or tarball cannot exhaust the operator's memory.
const (
	// MaxPackageBytes bounds the total size of a package's file contents.
	MaxPackageBytes = 64 << 20
	// MaxPackageEntries bounds the number of files and folders in a package.
	MaxPackageEntries = 10000
	// MaxDescriptorBytes bounds a descriptor file (and each file OSM would take for one),
	// checked before it is parsed: yaml.v3's node tree costs up to about 120 times its text.
	// Real NSDs and VNFDs are a few KiB (those of this repository's testdata under 1 KiB).
	MaxDescriptorBytes = 1 << 20
)
