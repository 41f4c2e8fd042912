//go:build !race

package nbisim

// raceEnabled tells the scale test that the race detector slows it down
// tenfold, so that it uses fewer NS instances and checks no timing.
const raceEnabled = false
