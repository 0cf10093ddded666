package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/floatx"
	"github.com/ascend-go/cann/ge/onnx"
)

// The exporter-shaped corpus of ge/onnx (testdata/corpus/manifest.json):
// models with symbolic dims, input sets at several shapes, and ONNX
// Runtime's outputs.
const corpusDir = "../../ge/onnx/testdata/corpus"

type corpus struct {
	Default tolerance `json:"default_tolerance"`
	Models  []struct {
		Name   string `json:"name"`
		Model  string `json:"model"`
		Inputs []struct {
			Name string `json:"name"`
			File string `json:"file"`
		} `json:"inputs"`
		Outputs []struct {
			Name string `json:"name"`
			File string `json:"file"`
		} `json:"outputs"`
		Sets []struct {
			Name string `json:"name"`
		} `json:"sets"`
		Tolerance *tolerance `json:"tolerance"`
	} `json:"models"`
}

type tolerance struct {
	Rtol float64 `json:"rtol"`
	Atol float64 `json:"atol"`
}

// TestRunCorpus runs every corpus model on every input set as a user
// would, `onnxrun -model M -input NAME=FILE.npy ... -out DIR` with no
// -shape, and compares each written output with ONNX Runtime's.
func TestRunCorpus(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(corpusDir, "manifest.json"))
	require.NoError(t, err)
	var c corpus
	require.NoError(t, json.Unmarshal(raw, &c))
	require.NotEmpty(t, c.Models)
	for _, m := range c.Models {
		t.Run(m.Name, func(t *testing.T) {
			tol := c.Default
			if m.Tolerance != nil {
				tol = *m.Tolerance
			}
			dir := filepath.Join(corpusDir, filepath.Dir(m.Model))
			for _, s := range m.Sets {
				out := t.TempDir()
				cfg := config{model: filepath.Join(corpusDir, m.Model), out: out, seed: 1, runs: 1}
				for _, in := range m.Inputs {
					cfg.inputs = append(cfg.inputs, in.Name+"="+filepath.Join(dir, "inputs", s.Name, in.File))
				}
				require.NoError(t, run(cfg, io.Discard), "%s %s", m.Name, s.Name)
				for _, o := range m.Outputs {
					gdt, gdims, got, err := readNpy(filepath.Join(out, safeName(o.Name)+".npy"))
					require.NoError(t, err, "%s %s output %s", m.Name, s.Name, o.Name)
					wdt, wdims, want, err := readNpy(filepath.Join(dir, "expected", s.Name, o.File))
					require.NoError(t, err)
					require.Equal(t, wdt, gdt, "%s %s output %s", m.Name, s.Name, o.Name)
					require.Equal(t, wdims, gdims, "%s %s output %s", m.Name, s.Name, o.Name)
					g, w := npyFloats(gdt, got), npyFloats(wdt, want)
					for i := range w {
						if math.IsNaN(w[i]) && math.IsNaN(g[i]) {
							continue
						}
						require.LessOrEqual(t, math.Abs(g[i]-w[i]), tol.Atol+tol.Rtol*math.Abs(w[i]),
							"%s %s output %s element %d: %v, want %v", m.Name, s.Name, o.Name, i, g[i], w[i])
					}
				}
			}
		})
	}
}

// npyFloats reads the numeric types onnxrun writes as float64.
func npyFloats(dt acl.DataType, b []byte) []float64 {
	n := len(b) / max(dt.Size(), 1)
	v := make([]float64, n)
	for i := range v {
		switch dt {
		case acl.Float32:
			v[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		case acl.Float16:
			v[i] = float64(floatx.F16ToF32(binary.LittleEndian.Uint16(b[2*i:])))
		case acl.Int64:
			v[i] = float64(int64(binary.LittleEndian.Uint64(b[8*i:])))
		case acl.Int32:
			v[i] = float64(int32(binary.LittleEndian.Uint32(b[4*i:])))
		case acl.Float64:
			v[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		case acl.Int16:
			v[i] = float64(int16(binary.LittleEndian.Uint16(b[2*i:])))
		case acl.Uint16:
			v[i] = float64(binary.LittleEndian.Uint16(b[2*i:]))
		case acl.Uint32:
			v[i] = float64(binary.LittleEndian.Uint32(b[4*i:]))
		case acl.Uint64:
			v[i] = float64(binary.LittleEndian.Uint64(b[8*i:]))
		case acl.Int8:
			v[i] = float64(int8(b[i]))
		case acl.Bool, acl.Uint8:
			v[i] = float64(b[i])
		}
	}
	return v
}

// TestRunTestdata runs every model of ge/onnx/testdata that comes with
// ONNX-format data (cnn, gonnx, misc, nn_ort) through onnxrun: each input
// written as a .npy file and given with -input, no -shape, and each
// output .npy compared with the expected TensorProto.
func TestRunTestdata(t *testing.T) {
	const dir = "../../ge/onnx/testdata"
	type tc struct{ model, set string }
	var cases []tc
	for _, m := range []string{"cnn", "gonnx/mlp", "gonnx/scaler"} {
		cases = append(cases, tc{filepath.Join(dir, m+".onnx"), filepath.Join(dir, m+"_")})
	}
	for _, sub := range []string{"misc", "nn_ort"} {
		models, _ := filepath.Glob(filepath.Join(dir, sub, "*", "model.onnx"))
		for _, m := range models {
			cases = append(cases, tc{m, filepath.Join(filepath.Dir(m), "test_data_set_0") + "/"})
		}
	}
	require.Greater(t, len(cases), 50)
	for _, c := range cases {
		name, _ := filepath.Rel(dir, c.model)
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(c.model)
			require.NoError(t, err)
			lm, err := onnx.Load(data, onnx.WithExternalDataDir(filepath.Dir(c.model)))
			require.NoError(t, err)
			tmp := t.TempDir()
			cfg := config{model: c.model, out: filepath.Join(tmp, "out"), seed: 1, runs: 1}
			ins, _ := filepath.Glob(c.set + "input_*.pb")
			for k, f := range ins {
				b, err := os.ReadFile(f)
				require.NoError(t, err)
				h, err := onnx.DecodeTensor(b)
				require.NoError(t, err)
				name := lm.Inputs()[k].Name
				if n := tensorName(b); n != "" {
					name = n
				}
				var buf bytes.Buffer
				require.NoError(t, writeNpy(&buf, h.Desc.DataType, h.Desc.Dims, h.Data))
				p := filepath.Join(tmp, fmt.Sprintf("in%d.npy", k))
				require.NoError(t, os.WriteFile(p, buf.Bytes(), 0o644))
				cfg.inputs = append(cfg.inputs, name+"="+p)
			}
			require.NoError(t, run(cfg, io.Discard))
			outs, _ := filepath.Glob(c.set + "output_*.pb")
			require.Len(t, outs, len(lm.Outputs()))
			for j, f := range outs {
				b, err := os.ReadFile(f)
				require.NoError(t, err)
				want, err := onnx.DecodeTensor(b)
				require.NoError(t, err)
				gdt, gdims, got, err := readNpy(filepath.Join(cfg.out, safeName(lm.Outputs()[j].Name)+".npy"))
				require.NoError(t, err)
				require.Equal(t, want.Desc.DataType, gdt)
				require.Equal(t, want.Desc.Dims, gdims)
				g, w := npyFloats(gdt, got), npyFloats(gdt, want.Data)
				for i := range w {
					if math.IsNaN(w[i]) && math.IsNaN(g[i]) {
						continue
					}
					require.LessOrEqual(t, math.Abs(g[i]-w[i]), 1e-4+1e-3*math.Abs(w[i]), "output %d element %d: %v, want %v", j, i, g[i], w[i])
				}
			}
		})
	}
}

// tensorName reads a serialized TensorProto's name (field 8).
func tensorName(b []byte) string {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return ""
		}
		b = b[n:]
		if num == 8 && typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return ""
			}
			return string(v)
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return ""
		}
		b = b[n:]
	}
	return ""
}
