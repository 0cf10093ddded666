package ge_test

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/ge/getest"
)

func batchMLP(t testing.TB, gears ...int64) *ge.BatchModel {
	t.Helper()
	bm, err := ge.CompileBatch(gears, func(b int64) (*ge.Graph, error) {
		return getest.MLP(rand.New(rand.NewPCG(1, 2)), acl.Float32, b, 4, 8, 3), nil
	})
	require.NoError(t, err)
	return bm
}

// TestBatchModel: gears sorted, a device's description (batch dim -1,
// largest sizes, the int32 [1] batch input last), and a round trip
// through MarshalBinary and ParseBatchModel.
func TestBatchModel(t *testing.T) {
	bm := batchMLP(t, 4, 1, 2)
	require.Equal(t, []int64{1, 2, 4}, bm.Batches())
	in := bm.Inputs()
	require.Len(t, in, 2)
	require.Equal(t, []int64{-1, 4}, in[0].Dims)
	require.Equal(t, int64(4*4*4), in[0].Size)
	require.Equal(t, ge.IODesc{Name: acl.DynamicTensorName, DataType: acl.Int32, Format: acl.FormatND, Dims: []int64{1}, Size: 4}, in[1])
	require.Equal(t, []int64{4, 3}, bm.Outputs()[0].Dims)
	require.NotNil(t, bm.Gear(2))
	require.Nil(t, bm.Gear(3))

	b, err := bm.MarshalBinary()
	require.NoError(t, err)
	back, err := ge.ParseBatchModel(b)
	require.NoError(t, err)
	require.Equal(t, bm.Batches(), back.Batches())
	require.Equal(t, bm.Inputs(), back.Inputs())
}

// TestBatchModelRefused: bad gears and bad bytes get typed errors.
func TestBatchModelRefused(t *testing.T) {
	build := func(b int64) (*ge.Graph, error) {
		return getest.MLP(rand.New(rand.NewPCG(1, 2)), acl.Float32, b, 4, 3), nil
	}
	for _, gears := range [][]int64{nil, {0, 1}, {2, 2}, make([]int64, acl.MaxBatchNum+1)} {
		_, err := ge.CompileBatch(gears, build)
		require.Equal(t, acl.CodeInvalidParam, acl.CodeOf(err), "%v", gears)
	}
	// A graph whose batch dim does not follow the gear.
	_, err := ge.CompileBatch([]int64{1, 2}, func(int64) (*ge.Graph, error) { return build(1) })
	require.ErrorContains(t, err, "batch dim")

	good, err := batchMLP(t, 1, 2).MarshalBinary()
	require.NoError(t, err)
	for name, c := range map[string]struct {
		b    []byte
		code acl.Code
	}{
		"short":       {good[:10], acl.CodeInvalidFileSize},
		"magic":       {append([]byte("ASCGEMBX"), good[8:]...), acl.CodeParseModel},
		"truncated":   {good[:len(good)-1], acl.CodeInvalidFileSize},
		"trailing":    {append(append([]byte(nil), good...), 0), acl.CodeInvalidFileSize},
		"no gears":    {patch(good, 12, 0), acl.CodeDeserializeModel},
		"huge length": {patch64(good, 24, 1<<62), acl.CodeInvalidFileSize},
		"same batch":  {patch64(good, 16, 2), acl.CodeDeserializeModel},
	} {
		_, err := ge.ParseBatchModel(c.b)
		require.Equal(t, c.code, acl.CodeOf(err), "%s: %v", name, err)
	}
}

func patch(b []byte, off int, v uint32) []byte {
	b = append([]byte(nil), b...)
	binary.LittleEndian.PutUint32(b[off:], v)
	return b
}

func patch64(b []byte, off int, v uint64) []byte {
	b = append([]byte(nil), b...)
	binary.LittleEndian.PutUint64(b[off:], v)
	return b
}

// FuzzParseBatchModel: any bytes parse to a valid model or a typed error.
func FuzzParseBatchModel(f *testing.F) {
	good, err := batchMLP(f, 1, 3).MarshalBinary()
	require.NoError(f, err)
	f.Add(good)
	f.Add([]byte(ge.BatchModelMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		bm, err := ge.ParseBatchModel(data)
		if err != nil {
			switch acl.CodeOf(err) {
			case acl.CodeInvalidFileSize, acl.CodeParseModel, acl.CodeDeserializeModel:
				return
			}
			t.Fatalf("unexpected code: %v", err)
		}
		if _, err := bm.MarshalBinary(); err != nil {
			t.Fatalf("accepted model does not serialise: %v", err)
		}
	})
}
