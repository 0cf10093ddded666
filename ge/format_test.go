package ge_test

import (
	"encoding/binary"
	"hash/crc32"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/ge/getest"
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// fixHeader rewrites the payload length and checksum so that a corrupted
// payload gets past the header checks and reaches the decoder.
func fixHeader(b []byte) []byte {
	if len(b) < ge.HeaderSize {
		return b
	}
	binary.LittleEndian.PutUint64(b[16:], uint64(len(b)-ge.HeaderSize))
	binary.LittleEndian.PutUint32(b[24:], crc32.Checksum(b[ge.HeaderSize:], crcTable))
	return b
}

// sampleModels compiles small instances of every reference graph and a few
// random graphs, with a NoZeroCopy op among them.
func sampleModels(t testing.TB, r *rand.Rand) []*ge.CompiledModel {
	var ms []*ge.CompiledModel
	for _, g := range []*ge.Graph{
		getest.MLP(r, acl.Float32, 2, 8, 16, 4),
		getest.Residual(r, acl.Float16, 2, 8, 16, 2),
		getest.BranchConcat(r, acl.BFloat16, 2, 8, 3),
		getest.TransformerBlock(r, acl.Float32, 1, 4, 8, 2),
		getest.RandomGraph(r, 12),
		getest.RandomGraph(r, 20),
	} {
		m, err := ge.Compile(g, ge.NoZeroCopyOps("fc1"))
		require.NoError(t, err)
		m.Attrs["origin"] = "test"
		ms = append(ms, m)
	}
	return ms
}

func TestModelRoundTrip(t *testing.T) {
	r := newRand(t)
	for _, m := range sampleModels(t, r) {
		b, err := m.MarshalBinary()
		require.NoError(t, err)
		p, err := ge.ParseModel(b)
		require.NoError(t, err)
		require.Equal(t, m, p)
		b2, err := p.MarshalBinary()
		require.NoError(t, err)
		require.Equal(t, b, b2, "encoding is canonical")
		require.NoError(t, getest.CheckModel(p))
	}
}

func parseCode(t *testing.T, b []byte) acl.Code {
	t.Helper()
	m, err := ge.ParseModel(b)
	if err == nil {
		require.NotNil(t, m)
		return acl.Success
	}
	require.Nil(t, m)
	var ae *acl.Error
	require.ErrorAs(t, err, &ae)
	require.ErrorIs(t, err, acl.ErrInvalidModel)
	require.Contains(t, []acl.Code{acl.CodeInvalidFileSize, acl.CodeParseModel, acl.CodeDeserializeModel}, ae.Code, err.Error())
	return ae.Code
}

func TestParseEveryTruncation(t *testing.T) {
	r := newRand(t)
	m := sampleModels(t, r)[0]
	b, err := m.MarshalBinary()
	require.NoError(t, err)
	for n := range len(b) {
		require.Equal(t, acl.CodeInvalidFileSize, parseCode(t, b[:n]), "length %d", n)
		if n >= ge.HeaderSize {
			fixed := fixHeader(slices.Clone(b[:n]))
			require.Equal(t, acl.CodeDeserializeModel, parseCode(t, fixed), "length %d with a fixed header", n)
		}
	}
	// Trailing bytes are refused as well.
	require.Equal(t, acl.CodeInvalidFileSize, parseCode(t, append(slices.Clone(b), 0)))
	require.Equal(t, acl.CodeDeserializeModel, parseCode(t, fixHeader(append(slices.Clone(b), 0))))
}

func TestParseEveryBitFlip(t *testing.T) {
	r := newRand(t)
	m := sampleModels(t, r)[0]
	b, err := m.MarshalBinary()
	require.NoError(t, err)
	for i := range 8 * len(b) {
		c := slices.Clone(b)
		c[i/8] ^= 1 << (i % 8)
		code := parseCode(t, c)
		require.NotEqual(t, acl.Success, code, "flip of bit %d went unnoticed", i)
		switch {
		case i/8 >= 16 && i/8 < 24:
			require.Equal(t, acl.CodeInvalidFileSize, code)
		default:
			require.Equal(t, acl.CodeParseModel, code, "bit %d", i)
		}
	}
}

// TestParseCorruptPayload corrupts the payload behind a valid checksum:
// the decoder and validator must reject it cleanly or accept a model that
// is itself valid, never panic.
func TestParseCorruptPayload(t *testing.T) {
	r := newRand(t)
	models := sampleModels(t, r)
	n := 8000
	if testing.Short() {
		n = 2000
	}
	blobs := make([][]byte, len(models))
	for i, m := range models {
		var err error
		blobs[i], err = m.MarshalBinary()
		require.NoError(t, err)
	}
	accepted := 0
	for i := range n {
		b := slices.Clone(blobs[i%len(blobs)])
		for k := 1 + r.IntN(3); k > 0; k-- {
			at := ge.HeaderSize + r.IntN(len(b)-ge.HeaderSize)
			switch r.IntN(4) {
			case 0:
				b[at] ^= 1 << r.IntN(8)
			case 1:
				b[at] = 0xff
			case 2:
				if at+4 <= len(b) {
					binary.LittleEndian.PutUint32(b[at:], r.Uint32())
				}
			default:
				b[at] = byte(r.IntN(4))
			}
		}
		code := parseCode(t, fixHeader(b))
		if code == acl.Success {
			accepted++
			p, err := ge.ParseModel(b)
			require.NoError(t, err)
			_, err = p.MarshalBinary()
			require.NoError(t, err)
		} else {
			require.Equal(t, acl.CodeDeserializeModel, code)
		}
	}
	t.Logf("%d of %d corrupted models still valid (weights or names changed)", accepted, n)
}

// TestParseHostileLengths declares huge counts and lengths in tiny inputs:
// the parser must refuse them without allocating in proportion.
func TestParseHostileLengths(t *testing.T) {
	r := newRand(t)
	m := sampleModels(t, r)[0]
	good, err := m.MarshalBinary()
	require.NoError(t, err)
	// Section 1 (model) starts the payload: id, zero, length, then the name.
	nameLen := ge.HeaderSize + 16
	sec1Len := ge.HeaderSize + 8
	sec2 := ge.HeaderSize + 16 + int(binary.LittleEndian.Uint64(good[sec1Len:]))
	cases := map[string]func(b []byte){
		"name length":     func(b []byte) { binary.LittleEndian.PutUint32(b[nameLen:], 0xffffffff) },
		"section length":  func(b []byte) { binary.LittleEndian.PutUint64(b[sec1Len:], 1<<62) },
		"negative length": func(b []byte) { binary.LittleEndian.PutUint64(b[sec1Len:], 1<<63) },
		"input count":     func(b []byte) { binary.LittleEndian.PutUint32(b[sec2+16:], 0xffffffff) },
		"memory size": func(b []byte) {
			off := nameLen + 4 + len(m.Name)
			binary.LittleEndian.PutUint64(b[off:], 1<<62)
		},
		"section order": func(b []byte) { binary.LittleEndian.PutUint32(b[sec2:], 3) },
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			b := slices.Clone(good)
			mutate(b)
			fixHeader(b)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := ge.ParseModel(b)
			runtime.ReadMemStats(&after)
			require.Equal(t, acl.CodeDeserializeModel, acl.CodeOf(err), "%v", err)
			assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64*len(b)+1<<16), "allocation must stay proportional to the input")
		})
	}
}

func TestParseHeaderErrors(t *testing.T) {
	r := newRand(t)
	b, err := sampleModels(t, r)[0].MarshalBinary()
	require.NoError(t, err)
	c := slices.Clone(b)
	copy(c, "NOTAMODL")
	_, err = ge.ParseModel(c)
	assert.Equal(t, acl.CodeParseModel, acl.CodeOf(err))
	assert.Contains(t, err.Error(), "magic")
	c = slices.Clone(b)
	binary.LittleEndian.PutUint32(c[8:], 2)
	_, err = ge.ParseModel(c)
	assert.Equal(t, acl.CodeParseModel, acl.CodeOf(err))
	assert.Contains(t, err.Error(), "version 2")
	_, err = ge.ParseModel(nil)
	assert.Equal(t, acl.CodeInvalidFileSize, acl.CodeOf(err))
}

func TestMarshalRefusesInvalidModels(t *testing.T) {
	r := newRand(t)
	mutations := map[string]func(m *ge.CompiledModel){
		"memory size":   func(m *ge.CompiledModel) { m.MemorySize += 512 },
		"unaligned":     func(m *ge.CompiledModel) { m.Plan[0].Offset += 8 },
		"weights":       func(m *ge.CompiledModel) { m.Weights = m.Weights[:len(m.Weights)-1] },
		"slot tag":      func(m *ge.CompiledModel) { m.Tasks[0].Args[0].Mem = ge.MemFeatureMap },
		"slot io":       func(m *ge.CompiledModel) { m.Tasks[0].Args[0].IO.Index = 7 },
		"slot offset":   func(m *ge.CompiledModel) { m.Tasks[0].Args[0].Offset += 512 },
		"slot buffer":   func(m *ge.CompiledModel) { m.Tasks[0].Args[0].Buffer = 1000 },
		"op type":       func(m *ge.CompiledModel) { m.Tasks[0].Op = ge.OpReshape },
		"shape":         func(m *ge.CompiledModel) { m.Tasks[0].Outputs[0].Dims[0]++ },
		"lifetime":      func(m *ge.CompiledModel) { m.Plan[len(m.Plan)-1].Last = 99 },
		"io layout":     func(m *ge.CompiledModel) { m.Inputs[0].BasicOffset, m.Plan[m.Inputs[0].Buffer].Offset = 0, 0 },
		"no outputs":    func(m *ge.CompiledModel) { m.Outputs = nil },
		"zero-copy":     func(m *ge.CompiledModel) { m.Outputs[0].ZeroCopy = false },
		"long name":     func(m *ge.CompiledModel) { m.Name = string(make([]byte, 5000)) },
		"attr kind":     func(m *ge.CompiledModel) { m.Tasks[0].Attrs["x"] = ge.Attr{Kind: 9} },
		"bool attr":     func(m *ge.CompiledModel) { m.Tasks[0].Attrs["x"] = ge.Attr{Kind: ge.AttrBool, I: 2} },
		"workspace":     func(m *ge.CompiledModel) { m.Tasks[0].Workspace = []int64{4} },
		"relative off":  func(m *ge.CompiledModel) { m.Inputs[0].RelativeOffsets = []int64{-1} },
		"io dims":       func(m *ge.CompiledModel) { m.Inputs[0].Dims = []int64{0} },
		"buffer kind":   func(m *ge.CompiledModel) { m.Plan[0].Kind = 9 },
		"negative size": func(m *ge.CompiledModel) { m.ZeroCopySize = -512 },
	}
	for name, mutate := range mutations {
		t.Run(name, func(t *testing.T) {
			m, err := ge.Compile(getest.MLP(r, acl.Float32, 2, 8, 16, 4))
			require.NoError(t, err)
			mutate(m)
			_, err = m.MarshalBinary()
			require.Equal(t, acl.CodeInvalidParam, acl.CodeOf(err), "%v", err)
		})
	}
}
