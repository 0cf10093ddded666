package onnxcmp

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	gox "github.com/advancedclimatesystems/gonnx/onnx"
	"google.golang.org/protobuf/proto"
)

// ortCase is one model with one set of inputs, as .npy files both
// runtimes read.
type ortCase struct {
	name   string // family/model
	model  string // path of model.onnx
	inputs []ortInput
}

type ortInput struct {
	name  string
	dtype string // numpy name: float32, float16, ...
	dims  []int64
	data  []byte // little-endian, C order
	file  string // .npy path (written by caseFiles for .pb inputs)
}

// ortCases lists every model of ge/onnx/testdata the benchmark runs: the
// test CNN, the gonnx sample models, the misc and nn_ort backend-test
// cases (inputs from test_data_set_0) and the exporter-shaped corpus (the
// input set with the most data, from manifest.json). Models whose name
// does not match filter are left out. tmp receives the .npy files of
// inputs stored as TensorProto.
func ortCases(root, tmp string, filter *regexp.Regexp) ([]ortCase, error) {
	var cs []ortCase
	add := func(name, model string, pbs []string) error {
		if filter != nil && !filter.MatchString(name) {
			return nil
		}
		c := ortCase{name: name, model: model}
		for i, p := range pbs {
			in, err := readTensorProto(p)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			in.file = filepath.Join(tmp, fmt.Sprintf("%s_%d.npy", strings.ReplaceAll(name, "/", "_"), i))
			if err := os.WriteFile(in.file, npyBytes(in), 0o644); err != nil {
				return err
			}
			c.inputs = append(c.inputs, in)
		}
		cs = append(cs, c)
		return nil
	}
	if err := add("cnn", filepath.Join(root, "cnn.onnx"), []string{filepath.Join(root, "cnn_input_0.pb")}); err != nil {
		return nil, err
	}
	for _, m := range []string{"mlp", "scaler"} {
		if err := add("gonnx/"+m, filepath.Join(root, "gonnx", m+".onnx"), []string{filepath.Join(root, "gonnx", m+"_input_0.pb")}); err != nil {
			return nil, err
		}
	}
	for _, fam := range []string{"misc", "nn_ort"} {
		dirs, err := filepath.Glob(filepath.Join(root, fam, "*", "model.onnx"))
		if err != nil {
			return nil, err
		}
		for _, m := range dirs {
			dir := filepath.Dir(m)
			pbs, err := filepath.Glob(filepath.Join(dir, "test_data_set_0", "input_*.pb"))
			if err != nil {
				return nil, err
			}
			// input_10.pb after input_9.pb
			slices.SortFunc(pbs, func(a, b string) int { return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b)) })
			if err := add(fam+"/"+filepath.Base(dir), m, pbs); err != nil {
				return nil, err
			}
		}
	}
	cc, err := corpusCases(filepath.Join(root, "corpus"), filter)
	return append(cs, cc...), err
}

// corpusCases reads corpus/manifest.json: each model with its largest
// input set.
func corpusCases(dir string, filter *regexp.Regexp) ([]ortCase, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return nil, err
	}
	var man struct {
		Models []struct {
			Name   string
			Model  string
			Inputs []struct{ Name, File string }
			Sets   []struct{ Name string }
		}
	}
	if err := json.Unmarshal(raw, &man); err != nil {
		return nil, err
	}
	var cs []ortCase
	for _, m := range man.Models {
		name := "corpus/" + m.Name
		if filter != nil && !filter.MatchString(name) {
			continue
		}
		var best ortCase
		bestSize := -1
		for _, s := range m.Sets {
			c := ortCase{name: name, model: filepath.Join(dir, m.Model)}
			size := 0
			for _, in := range m.Inputs {
				f := filepath.Join(dir, filepath.Dir(m.Model), "inputs", s.Name, in.File)
				x, err := readNpyFile(f)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", name, err)
				}
				x.name, x.file = in.Name, f
				size += len(x.data)
				c.inputs = append(c.inputs, x)
			}
			if size > bestSize {
				best, bestSize = c, size
			}
		}
		cs = append(cs, best)
	}
	return cs, nil
}

// ONNX TensorProto data types and their numpy names and sizes.
var pbTypes = map[int32]struct {
	name  string
	descr string
	size  int
}{
	1: {"float32", "<f4", 4}, 10: {"float16", "<f2", 2}, 11: {"float64", "<f8", 8},
	7: {"int64", "<i8", 8}, 6: {"int32", "<i4", 4}, 9: {"bool", "|b1", 1},
	2: {"uint8", "|u1", 1}, 3: {"int8", "|i1", 1},
}

func readTensorProto(path string) (ortInput, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return ortInput{}, err
	}
	var tp gox.TensorProto
	if err := proto.Unmarshal(raw, &tp); err != nil {
		return ortInput{}, fmt.Errorf("%s: %w", path, err)
	}
	t, ok := pbTypes[tp.DataType]
	if !ok {
		return ortInput{}, fmt.Errorf("%s: data type %d is not one the benchmark feeds", path, tp.DataType)
	}
	in := ortInput{name: tp.Name, dtype: t.name, dims: tp.Dims}
	n := 1
	for _, d := range tp.Dims {
		n *= int(d)
	}
	switch {
	case len(tp.RawData) > 0:
		in.data = tp.RawData
	case len(tp.FloatData) > 0:
		for _, v := range tp.FloatData {
			in.data = binary.LittleEndian.AppendUint32(in.data, math.Float32bits(v))
		}
	case len(tp.DoubleData) > 0:
		for _, v := range tp.DoubleData {
			in.data = binary.LittleEndian.AppendUint64(in.data, math.Float64bits(v))
		}
	case len(tp.Int64Data) > 0:
		for _, v := range tp.Int64Data {
			in.data = binary.LittleEndian.AppendUint64(in.data, uint64(v))
		}
	case len(tp.Int32Data) > 0: // int32 and the narrower types, one per element
		for _, v := range tp.Int32Data {
			switch t.size {
			case 4:
				in.data = binary.LittleEndian.AppendUint32(in.data, uint32(v))
			case 2:
				in.data = binary.LittleEndian.AppendUint16(in.data, uint16(v))
			default:
				in.data = append(in.data, byte(v))
			}
		}
	}
	if len(in.data) != n*t.size {
		return ortInput{}, fmt.Errorf("%s: %d bytes for %d %s elements", path, len(in.data), n, t.name)
	}
	return in, nil
}

// npyBytes is a version 1.0 .npy file of in.
func npyBytes(in ortInput) []byte {
	var descr string
	for _, t := range pbTypes {
		if t.name == in.dtype {
			descr = t.descr
		}
	}
	dims := make([]string, len(in.dims))
	for i, d := range in.dims {
		dims[i] = fmt.Sprint(d)
	}
	shape := "(" + strings.Join(dims, ", ") + ")"
	if len(dims) == 1 {
		shape = "(" + dims[0] + ",)"
	}
	h := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape)
	h += strings.Repeat(" ", 64-(10+len(h)+1)%64) + "\n"
	b := append([]byte("\x93NUMPY\x01\x00"), byte(len(h)), byte(len(h)>>8))
	return append(append(b, h...), in.data...)
}

var npyHeader = regexp.MustCompile(`'descr':\s*'([^']+)'.*'shape':\s*\(([^)]*)\)`)

// readNpyFile reads a version 1 or 2 C-order .npy file of a type in
// pbTypes.
func readNpyFile(path string) (ortInput, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return ortInput{}, err
	}
	if len(b) < 12 || string(b[:6]) != "\x93NUMPY" {
		return ortInput{}, fmt.Errorf("%s: not a .npy file", path)
	}
	hlen, start := int(binary.LittleEndian.Uint16(b[8:])), 10
	if b[6] >= 2 {
		hlen, start = int(binary.LittleEndian.Uint32(b[8:])), 12
	}
	if start+hlen > len(b) {
		return ortInput{}, fmt.Errorf("%s: header runs past the file", path)
	}
	h := string(b[start : start+hlen])
	m := npyHeader.FindStringSubmatch(h)
	if m == nil || strings.Contains(h, "'fortran_order': True") {
		return ortInput{}, fmt.Errorf("%s: header %q", path, h)
	}
	in := ortInput{data: b[start+hlen:]}
	for _, t := range pbTypes {
		if t.descr == m[1] {
			in.dtype = t.name
		}
	}
	if in.dtype == "" {
		return ortInput{}, fmt.Errorf("%s: dtype %s", path, m[1])
	}
	for _, f := range strings.Split(m[2], ",") {
		if f = strings.TrimSpace(f); f != "" {
			var d int64
			if _, err := fmt.Sscan(f, &d); err != nil {
				return ortInput{}, fmt.Errorf("%s: shape %q", path, m[2])
			}
			in.dims = append(in.dims, d)
		}
	}
	return in, nil
}

// asFloat64 converts little-endian elements of a numpy dtype to float64
// for comparing outputs.
func asFloat64(dtype string, b []byte) []float64 {
	var out []float64
	switch dtype {
	case "float32":
		for i := 0; i+4 <= len(b); i += 4 {
			out = append(out, float64(math.Float32frombits(binary.LittleEndian.Uint32(b[i:]))))
		}
	case "float64":
		for i := 0; i+8 <= len(b); i += 8 {
			out = append(out, math.Float64frombits(binary.LittleEndian.Uint64(b[i:])))
		}
	case "float16":
		for i := 0; i+2 <= len(b); i += 2 {
			out = append(out, half(binary.LittleEndian.Uint16(b[i:])))
		}
	case "int64":
		for i := 0; i+8 <= len(b); i += 8 {
			out = append(out, float64(int64(binary.LittleEndian.Uint64(b[i:]))))
		}
	case "int32":
		for i := 0; i+4 <= len(b); i += 4 {
			out = append(out, float64(int32(binary.LittleEndian.Uint32(b[i:]))))
		}
	case "int8":
		for _, v := range b {
			out = append(out, float64(int8(v)))
		}
	default: // bool, uint8
		for _, v := range b {
			out = append(out, float64(v))
		}
	}
	return out
}

func half(h uint16) float64 {
	s, e, f := h>>15, int(h>>10)&31, float64(h&1023)
	var m float64
	switch e {
	case 0:
		m = f / 1024 * math.Ldexp(1, -14)
	case 31:
		m = math.Inf(1)
		if f != 0 {
			m = math.NaN()
		}
	default:
		m = (1 + f/1024) * math.Ldexp(1, e-15)
	}
	if s != 0 {
		return -m
	}
	return m
}
