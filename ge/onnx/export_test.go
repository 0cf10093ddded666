package onnx

import (
	"context"

	"github.com/ascend-go/cann/ge"
)

// Interpret runs m through the interpreter alone (every node folded on the
// run's values, as every interpreted run did before staged plans): the
// independent reference the staged runs are checked against.
func Interpret(ctx context.Context, m *Model, in []ge.HostTensor) ([]ge.HostTensor, error) {
	vs := make([]Value, len(in))
	for i, t := range in {
		vs[i] = Value{Tensor: t}
	}
	out, err := m.interpret(ctx, vs)
	if err != nil {
		return nil, err
	}
	ts := make([]ge.HostTensor, len(out))
	for i, v := range out {
		ts[i] = v.Tensor
	}
	return ts, nil
}
