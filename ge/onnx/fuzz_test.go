package onnx_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

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
