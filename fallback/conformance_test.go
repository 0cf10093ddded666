package fallback_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/acl/acltest"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/internal/npuhook"
	"github.com/ascend-go/cann/internal/zcrt"
	"github.com/stretchr/testify/require"
)

// TestConformance runs the shared ACL conformance suite on a fresh
// fallback NPU. The hooks use the NPU's test surface: a queued task (npuhook) to hold a
// stream busy, FailTask to fail the next stream task, Leaks for what
// reset and finalize had to release.
func TestConformance(t *testing.T) {
	const streams, events = 40, 100 // as the stub's (acl/native conformance_test.go)
	npu, err := fallback.New(fallback.WithResourceLimits(streams, events))
	require.NoError(t, err)
	t.Cleanup(func() { _ = npu.Close() })
	acltest.Run(t, npu, acltest.Options{
		HoldStream: func(s acl.StreamHandle) (func(), error) {
			gate := make(chan struct{})
			var once sync.Once
			release := func() { once.Do(func() { close(gate) }) }
			if _, err := npuhook.Of(npu).Enqueue(s, "hold", func() error { <-gate; return nil }); err != nil {
				return nil, err
			}
			return release, nil
		},
		FailNextTask: func(s acl.StreamHandle, code acl.Code) error {
			npu.FailTask(1, code)
			return nil
		},
		Model:      addModel,
		BatchModel: addBatchModel,
		// conformance_dynamic_test.go
		DynamicModel: dynamicAddModel,
		StreamLimit:  streams,
		EventLimit:   events,
		Leaks: func() []string {
			var out []string
			for _, l := range npu.Leaks() {
				out = append(out, l.String())
			}
			return out
		},
	})
}

// addModel builds the conformance suite's model with the graph compiler:
// output k = (input k + a one-element constant of its type) · 1, so that
// the sum is an intermediate tensor in the feature map.
func addModel(ios []acltest.ModelIO) ([]byte, error) {
	var copied []string
	for _, io := range ios {
		if io.CopyOnly {
			copied = append(copied, io.Out+"_mul")
		}
	}
	m, err := ge.Compile(addGraph(ios), ge.NoZeroCopyOps(copied...))
	if err != nil {
		return nil, err
	}
	var pairs []string
	for k, io := range ios {
		if io.ReuseInput {
			pairs = append(pairs, fmt.Sprintf("%d,%d", k, k))
		}
	}
	if pairs != nil {
		m.Attrs[zcrt.OptionOutputReuseInputMemIndexes] = strings.Join(pairs, "|")
	}
	return m.MarshalBinary()
}

// addBatchModel builds addModel's graph once per batch gear (dim 0 of
// every input) into a dynamic-batch model.
func addBatchModel(ios []acltest.ModelIO, gears []uint64) ([]byte, error) {
	var gs []int64
	for _, g := range gears {
		gs = append(gs, int64(g))
	}
	bm, err := ge.CompileBatch(gs, func(b int64) (*ge.Graph, error) {
		at := make([]acltest.ModelIO, len(ios))
		for i, io := range ios {
			at[i] = io
			at[i].Dims = append([]int64{b}, io.Dims[1:]...)
		}
		return addGraph(at), nil
	})
	if err != nil {
		return nil, err
	}
	return bm.MarshalBinary()
}

// addGraph is the graph of addModel.
func addGraph(ios []acltest.ModelIO) *ge.Graph {
	g := ge.NewGraph("acltest")
	outs := make([]*ge.Tensor, len(ios))
	names := make([]string, len(ios))
	for k, io := range ios {
		x := g.Data(io.In, k, io.DataType, io.Dims, ge.WithFormat(io.Format))
		a := make([]byte, 4)
		binary.LittleEndian.PutUint32(a, io.Addend)
		c := g.Const(io.In+"_addend", io.DataType, []int64{1}, a)
		one := make([]byte, 4)
		if io.DataType == acl.Float32 {
			binary.LittleEndian.PutUint32(one, math.Float32bits(1))
		} else {
			binary.LittleEndian.PutUint32(one, 1)
		}
		sum := g.Add(x, c, ge.Name(io.Out+"_add"))
		outs[k] = g.Mul(sum, g.Const(io.In+"_one", io.DataType, []int64{1}, one), ge.Name(io.Out+"_mul"))
		names[k] = io.Out
	}
	g.OutputNamed(names, outs...)
	return g
}
