//go:build race

package onnx_test

// raceEnabled: the race detector instruments allocations, so allocation
// counts are not checked under it.
const raceEnabled = true
