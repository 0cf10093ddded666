//go:build race

package ge

// raceEnabled: the race detector instruments allocations, so allocation
// counts are not checked under it.
const raceEnabled = true
