//go:build race

package osm

// raceEnabled tells the heap test that the race detector slows decoding tenfold, past the
// client's timeout for an answer of 256 MiB.
const raceEnabled = true
