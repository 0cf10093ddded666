package acl

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

func TestIODimsLayout(t *testing.T) {
	var d IODims
	require.Equal(t, uintptr(1160), unsafe.Sizeof(d))
	require.Equal(t, uintptr(128), unsafe.Offsetof(d.DimCount))
	require.Equal(t, uintptr(136), unsafe.Offsetof(d.Dims))
	copy(d.Name[:], "input_0")
	d.DimCount = 2
	d.Dims[0], d.Dims[1] = 4, 8
	require.Equal(t, "input_0", d.NameString())
	require.Equal(t, []int64{4, 8}, d.Shape())
	d.DimCount = 1 << 40 // hostile count never overruns
	require.Len(t, d.Shape(), MaxDimCount)
}
