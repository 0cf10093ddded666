//go:build race

package engram_test

const raceEnabled = true
