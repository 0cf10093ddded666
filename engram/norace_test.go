//go:build !race

package engram_test

const raceEnabled = false
