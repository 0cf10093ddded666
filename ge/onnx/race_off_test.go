//go:build !race

package onnx_test

const raceEnabled = false
