package onnx_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/ge/onnx"
)

// FuzzImport: any bytes either import and compile, or fail with an
// *onnx.Error (or, from the compiler, an *acl.Error) — never a panic or a
// hang.
func FuzzImport(f *testing.F) {
	for _, p := range []string{"testdata/cnn.onnx", "testdata/gonnx/mlp.onnx", "testdata/gonnx/scaler.onnx"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	seeds, _ := filepath.Glob(filepath.Join(testDataDir, "node", "test_*", "model.onnx"))
	for i, p := range seeds {
		if i%40 == 0 {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := onnx.Import(data, onnx.WithExternalDataDir(t.TempDir()))
		if err != nil {
			var e *onnx.Error
			if !errors.As(err, &e) || acl.CodeOf(err) == 0 {
				t.Fatalf("import error is not a typed *onnx.Error with an ACL code: %T %v", err, err)
			}
			return
		}
		if _, err := ge.Compile(g); err != nil {
			var ae *acl.Error
			if !errors.As(err, &ae) {
				t.Fatalf("compile error is not an *acl.Error: %T %v", err, err)
			}
		}
	})
}

// FuzzModel: any bytes either fail Load, or load and run (each symbolic
// dim 2, zeroed inputs) to outputs or to an *onnx.Error with an ACL code —
// never a panic, and never a hang: the run's context and memory limit end
// loops that would not.
func FuzzModel(f *testing.F) {
	for _, name := range []string{"test_if", "test_loop11", "test_scan9_sum", "test_scan_sum",
		"test_range_float_type_positive_delta_expanded", "test_nonzero_example", "test_reshape_extended_dims"} {
		if b, err := os.ReadFile(filepath.Join(testDataDir, "node", name, "model.onnx")); err == nil {
			f.Add(b)
		}
	}
	for _, b := range [][]byte{endlessLoop(), symbolicMLP()} {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		typed := func(err error) {
			var e *onnx.Error
			if !errors.As(err, &e) || acl.CodeOf(err) == 0 {
				t.Fatalf("error is not a typed *onnx.Error with an ACL code: %T %v", err, err)
			}
		}
		m, err := onnx.Load(data, onnx.WithExternalDataDir(t.TempDir()), onnx.WithMemoryLimit(8<<20))
		if err != nil {
			typed(err)
			return
		}
		var in []ge.HostTensor
		for _, d := range m.Inputs() {
			dims := make([]int64, len(d.Dims))
			for i, x := range d.Dims {
				dims[i] = x
				if x < 0 {
					dims[i] = 2
				}
			}
			desc := ge.TensorDesc{DataType: d.DataType, Dims: dims}
			if desc.Size() > 1<<20 {
				return
			}
			in = append(in, ge.HostTensor{Desc: desc, Data: make([]byte, desc.Size())})
		}
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		if _, err := m.Run(ctx, in); err != nil {
			typed(err)
		}
	})
}
