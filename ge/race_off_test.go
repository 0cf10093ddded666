//go:build !race

package ge

const raceEnabled = false
