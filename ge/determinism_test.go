package ge_test

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/ge/getest"
)

// A model's outputs are bit-identical whatever GOMAXPROCS is: the GEMMs
// split work only at tile boundaries with a fixed K blocking, and every
// elementwise and row kernel's result depends only on its own data. The
// shapes are large enough that the GEMMs run on several threads (both
// the short-product and the blocked path) and that Relu, Gelu and the
// norms split over threads at points inside their vectors' tails.
func TestModelBitIdenticalAcrossGOMAXPROCS(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, c := range []struct {
		name string
		g    *ge.Graph
	}{
		{"MLP", getest.MLP(r, acl.Float32, 65, 256, 600, 520, 16)},
		{"Transformer", getest.TransformerBlock(r, acl.Float32, 1, 150, 136, 4)},
	} {
		m, err := ge.Compile(c.g)
		require.NoError(t, err, c.name)
		var in [][]byte
		for _, d := range m.Inputs {
			f := getest.RandFloats(r, int(d.Size/4), 2)
			in = append(in, unsafe.Slice((*byte)(unsafe.Pointer(&f[0])), d.Size))
		}
		var first [][]byte
		for _, procs := range []int{1, 2, 3} {
			old := runtime.GOMAXPROCS(procs)
			out, err := getest.Run(m, in)
			runtime.GOMAXPROCS(old)
			require.NoError(t, err, c.name)
			if first == nil {
				first = out
				continue
			}
			require.Equal(t, first, out, "%s at GOMAXPROCS=%d differs from GOMAXPROCS=1", c.name, procs)
		}
	}
}
