//go:build !race

package osm

const raceEnabled = false
