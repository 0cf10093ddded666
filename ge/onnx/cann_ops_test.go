package onnx_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ascend-go/cann/ge/onnx"
)

// TestEveryCANNOpHasAConverter fails when an operator of CANN's list (or
// one exporters emit beside it) has no converter.
func TestEveryCANNOpHasAConverter(t *testing.T) {
	ops := strings.Fields(cannOps)
	assert.Len(t, ops, 134)
	have := map[string]bool{}
	for _, op := range onnx.Ops() {
		have[op] = true
	}
	for _, op := range append(ops, strings.Fields(exporterOps)...) {
		assert.True(t, have[op], "no converter for %s", op)
	}
}
