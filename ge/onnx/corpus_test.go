package onnx_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/floatx"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/ge/onnx"
)

// corpusDir holds the exporter-shaped model corpus: models written by
// testdata/corpus/gen.py, expected outputs by ONNX Runtime through
// testdata/corpus/ref.mjs (see the README there).
var corpusDir = filepath.Join("testdata", "corpus")

// corpusPending lists the corpus models the importer cannot run yet, with
// the reason (the importer's refusal or the mismatch). TestCorpus skips
// them while they fail and fails once one passes every input set, so this
// list only shrinks: delete the entry when the importer catches up. "passes
// set0" notes say what was checked by substituting the missing op in a
// scratch copy of the model.
var corpusPending = map[string]string{}

// corpusManifest mirrors testdata/corpus/manifest.json.
type corpusManifest struct {
	DefaultTolerance corpusTolerance `json:"default_tolerance"`
	Models           []corpusModel   `json:"models"`
}

type corpusModel struct {
	Name      string           `json:"name"`
	Model     string           `json:"model"`
	Opset     int              `json:"opset"`
	Exporter  string           `json:"exporter"`
	Inputs    []corpusTensor   `json:"inputs"`
	Outputs   []corpusTensor   `json:"outputs"`
	Sets      []corpusSet      `json:"sets"`
	Tolerance *corpusTolerance `json:"tolerance"`
}

type corpusTensor struct {
	Name  string `json:"name"`
	File  string `json:"file"`
	Dtype string `json:"dtype"`
}

type corpusSet struct {
	Name string           `json:"name"`
	Dims map[string]int64 `json:"dims"`
}

// corpusTolerance: an element agrees when |got-want| <= Atol + Rtol*|want|.
type corpusTolerance struct {
	Rtol float64 `json:"rtol"`
	Atol float64 `json:"atol"`
}

// TestCorpus loads every corpus model once, with its symbolic dims, runs
// it on each input set at that set's shapes (onnx.Model: a plan per shape
// tuple) and compares every output to ONNX Runtime's within the model's
// tolerance.
func TestCorpus(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(corpusDir, "manifest.json"))
	require.NoError(t, err)
	var man corpusManifest
	require.NoError(t, json.Unmarshal(raw, &man))
	require.NotEmpty(t, man.Models)
	names := map[string]bool{}
	for _, m := range man.Models {
		names[m.Name] = true
	}
	for name := range corpusPending {
		require.True(t, names[name], "corpusPending names %q, which is not in the corpus", name)
	}
	for _, m := range man.Models {
		t.Run(m.Name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(corpusDir, m.Model))
			require.NoError(t, err)
			tol := man.DefaultTolerance
			if m.Tolerance != nil {
				tol = *m.Tolerance
			}
			require.NotEmpty(t, m.Sets)
			var failed []string
			model, err := loadCorpus(data)
			for _, s := range m.Sets {
				if err == nil {
					err = runCorpusSet(m, s, model, tol)
				}
				if err != nil {
					failed = append(failed, fmt.Sprintf("%s: %v", s.Name, err))
					// The importer and kernels refuse bad input with errors:
					// a panic fails the test even for a pending model.
					require.NotErrorIs(t, err, errCorpusPanic, "%s", s.Name)
				}
			}
			reason, pending := corpusPending[m.Name]
			switch {
			case pending && len(failed) == 0:
				t.Errorf("%s passes every input set now: delete it from corpusPending (listed as: %s)", m.Name, reason)
			case pending:
				t.Skipf("pending (%s); %s", reason, failed[0])
			case len(failed) > 0:
				t.Errorf("%s (%s, opset %d):\n%s", m.Name, m.Exporter, m.Opset, strings.Join(failed, "\n"))
			}
		})
	}
}

var errCorpusPanic = errors.New("panic")

// loadCorpus loads a model; a panic is reported as an error.
func loadCorpus(data []byte) (m *onnx.Model, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", errCorpusPanic, r)
		}
	}()
	return onnx.Load(data)
}

// runCorpusSet runs one model on one input set and compares the outputs;
// a panic anywhere is reported as an error too.
func runCorpusSet(m corpusModel, s corpusSet, model *onnx.Model, tol corpusTolerance) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", errCorpusPanic, r)
		}
	}()
	setDir := filepath.Join(corpusDir, filepath.Dir(m.Model))
	ins := map[string]npyArray{}
	for _, in := range m.Inputs {
		a, err := readNpy(filepath.Join(setDir, "inputs", s.Name, in.File))
		if err != nil {
			return err
		}
		if a.dtype != in.Dtype {
			return fmt.Errorf("input %q: the .npy holds %s, the manifest says %s", in.Name, a.dtype, in.Dtype)
		}
		ins[in.Name] = a
	}
	mins := model.Inputs()
	if len(mins) != len(m.Inputs) {
		return fmt.Errorf("the model has %d inputs, the manifest lists %d", len(mins), len(m.Inputs))
	}
	feeds := make([]ge.HostTensor, len(mins))
	for i, d := range mins {
		a, ok := ins[d.Name]
		if !ok {
			return fmt.Errorf("the model has input %q, which the manifest does not list", d.Name)
		}
		if dt := npyDtype(d.DataType); dt != a.dtype {
			return fmt.Errorf("input %q: the model takes %s, the set gives %s", d.Name, d.DataType, a.dtype)
		}
		feeds[i] = ge.HostTensor{Desc: ge.TensorDesc{DataType: d.DataType, Format: acl.FormatND, Dims: a.shape}, Data: a.data}
	}
	res, err := model.Run(context.Background(), feeds)
	if err != nil {
		return err
	}
	mouts := model.Outputs()
	if len(res) != len(m.Outputs) {
		return fmt.Errorf("the model has %d outputs, the manifest lists %d", len(res), len(m.Outputs))
	}
	for j, o := range m.Outputs {
		d := res[j].Desc
		if mouts[j].Name != o.Name {
			return fmt.Errorf("output %d is %q, the manifest says %q", j, mouts[j].Name, o.Name)
		}
		want, err := readNpy(filepath.Join(setDir, "expected", s.Name, o.File))
		if err != nil {
			return err
		}
		got := npyArray{dtype: npyDtype(d.DataType), shape: d.Dims, data: res[j].Data}
		if err := compareNpy(got, want, tol); err != nil {
			return fmt.Errorf("output %q: %w", o.Name, err)
		}
	}
	return nil
}

// compareNpy checks dtype, shape and values: floats within tol (NaN
// matches NaN, infinities must match exactly), integers and bools exactly.
func compareNpy(got, want npyArray, tol corpusTolerance) error {
	if got.dtype != want.dtype || !slices.Equal(got.shape, want.shape) {
		return fmt.Errorf("got %s%v, want %s%v", got.dtype, got.shape, want.dtype, want.shape)
	}
	g, w := got.float64s(), want.float64s()
	if len(g) != len(w) {
		return fmt.Errorf("got %d elements, want %d", len(g), len(w))
	}
	exact := want.dtype != "float32" && want.dtype != "float16"
	bad, first := 0, -1
	worst := 0.0
	for i := range w {
		ok := g[i] == w[i] || (math.IsNaN(g[i]) && math.IsNaN(w[i]))
		if !ok && !exact && !math.IsInf(w[i], 0) {
			ok = math.Abs(g[i]-w[i]) <= tol.Atol+tol.Rtol*math.Abs(w[i])
		}
		if !ok {
			if first < 0 {
				first = i
			}
			bad++
			worst = max(worst, math.Abs(g[i]-w[i]))
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d of %d elements differ (rtol %g, atol %g): first at flat index %d: got %g, want %g; largest |diff| %g",
			bad, len(w), tol.Rtol, tol.Atol, first, g[first], w[first], worst)
	}
	return nil
}

// npyArray is a little-endian, C-order .npy array.
type npyArray struct {
	dtype string // float32, float16, int64, int32, bool
	shape []int64
	data  []byte
}

// npyDescrs maps the .npy dtype descriptors the corpus uses to names.
// Big-endian, Fortran-order and other dtypes are refused.
var npyDescrs = map[string]string{"<f4": "float32", "<f2": "float16", "<i8": "int64", "<i4": "int32", "|b1": "bool"}

var npyElemSize = map[string]int{"float32": 4, "float16": 2, "int64": 8, "int32": 4, "bool": 1}

func npyDtype(dt acl.DataType) string {
	switch dt {
	case acl.Float32:
		return "float32"
	case acl.Float16:
		return "float16"
	case acl.Int64:
		return "int64"
	case acl.Int32:
		return "int32"
	case acl.Bool:
		return "bool"
	}
	return dt.String()
}

var (
	npyDescrRE   = regexp.MustCompile(`'descr':\s*'([^']*)'`)
	npyFortranRE = regexp.MustCompile(`'fortran_order':\s*(True|False)`)
	npyShapeRE   = regexp.MustCompile(`'shape':\s*\(([^)]*)\)`)
)

// readNpy reads a .npy file (format versions 1 to 3).
func readNpy(path string) (npyArray, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return npyArray{}, err
	}
	return parseNpy(b, path)
}

func parseNpy(b []byte, path string) (npyArray, error) {
	fail := func(format string, args ...any) (npyArray, error) {
		return npyArray{}, fmt.Errorf("%s: %s", path, fmt.Sprintf(format, args...))
	}
	if len(b) < 10 || !bytes.Equal(b[:6], []byte("\x93NUMPY")) {
		return fail("not a .npy file")
	}
	var hlen, start int
	switch b[6] {
	case 1:
		hlen, start = int(binary.LittleEndian.Uint16(b[8:10])), 10
	case 2, 3:
		if len(b) < 12 {
			return fail("truncated header")
		}
		hlen, start = int(binary.LittleEndian.Uint32(b[8:12])), 12
	default:
		return fail("format version %d.%d is not supported", b[6], b[7])
	}
	if start+hlen > len(b) {
		return fail("truncated header")
	}
	header := string(b[start : start+hlen])
	d, f, s := npyDescrRE.FindStringSubmatch(header), npyFortranRE.FindStringSubmatch(header), npyShapeRE.FindStringSubmatch(header)
	if d == nil || f == nil || s == nil {
		return fail("header %q lacks descr, fortran_order or shape", header)
	}
	dtype, ok := npyDescrs[d[1]]
	if !ok {
		return fail("dtype %q is not supported (want little-endian float32, float16, int64, int32 or bool)", d[1])
	}
	if f[1] == "True" {
		return fail("Fortran-order arrays are not supported")
	}
	a := npyArray{dtype: dtype, shape: []int64{}}
	n := int64(1)
	for _, p := range strings.Split(s[1], ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		v, err := strconv.ParseInt(p, 10, 64)
		if err != nil || v < 0 {
			return fail("bad shape %q", s[1])
		}
		a.shape = append(a.shape, v)
		n *= v
	}
	body := b[start+hlen:]
	if want := n * int64(npyElemSize[dtype]); int64(len(body)) != want {
		return fail("%d data bytes, shape %v of %s needs %d", len(body), a.shape, dtype, want)
	}
	a.data = body
	return a, nil
}

// float64s widens the elements for comparison.
func (a npyArray) float64s() []float64 {
	sz := npyElemSize[a.dtype]
	v := make([]float64, len(a.data)/sz)
	for i := range v {
		e := a.data[i*sz : (i+1)*sz]
		switch a.dtype {
		case "float32":
			v[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(e)))
		case "float16":
			v[i] = float64(floatx.F16ToF32(binary.LittleEndian.Uint16(e)))
		case "int64":
			v[i] = float64(int64(binary.LittleEndian.Uint64(e)))
		case "int32":
			v[i] = float64(int32(binary.LittleEndian.Uint32(e)))
		case "bool":
			v[i] = float64(e[0])
		}
	}
	return v
}

// TestNpyReader: the reader takes the corpus's dtypes and refuses others
// with a clear error.
func TestNpyReader(t *testing.T) {
	npy := func(descr, fortran, shape string, data []byte) []byte {
		h := fmt.Sprintf("{'descr': '%s', 'fortran_order': %s, 'shape': %s, }", descr, fortran, shape)
		h += strings.Repeat(" ", 63-(10+len(h))%64) + "\n"
		b := append([]byte("\x93NUMPY\x01\x00"), byte(len(h)), byte(len(h)>>8))
		return append(append(b, h...), data...)
	}
	a, err := parseNpy(npy("<i8", "False", "(2,)", []byte{1, 0, 0, 0, 0, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}), "x")
	require.NoError(t, err)
	require.Equal(t, []int64{2}, a.shape)
	require.Equal(t, []float64{1, -2}, a.float64s())
	a, err = parseNpy(npy("<f2", "False", "()", []byte{0x00, 0x3c}), "x")
	require.NoError(t, err)
	require.Equal(t, []int64{}, a.shape)
	require.Equal(t, []float64{1}, a.float64s())
	for _, tc := range []struct {
		b    []byte
		want string
	}{
		{npy("<f8", "False", "(1,)", make([]byte, 8)), `dtype "<f8" is not supported`},
		{npy(">f4", "False", "(1,)", make([]byte, 4)), `dtype ">f4" is not supported`},
		{npy("<f4", "True", "(1,)", make([]byte, 4)), "Fortran-order"},
		{npy("<f4", "False", "(2, 3)", make([]byte, 4)), "needs 24"},
		{[]byte("PK\x03\x04 not npy"), "not a .npy file"},
	} {
		_, err := parseNpy(tc.b, "x")
		require.ErrorContains(t, err, tc.want)
	}
	one, two := []byte{0, 0, 0x80, 0x3f}, []byte{0, 0, 0, 0x40}
	f32 := func(b []byte) npyArray { return npyArray{dtype: "float32", shape: []int64{1}, data: b} }
	require.NoError(t, compareNpy(f32(one), f32(one), corpusTolerance{1e-3, 1e-5}))
	require.ErrorContains(t, compareNpy(f32(one), f32(two), corpusTolerance{1e-3, 1e-5}), "1 of 1 elements differ")
	require.NoError(t, compareNpy(f32(one), f32(two), corpusTolerance{0, 1}))
}
