package zerocopy_test

import (
	"context"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/floatx"
	"github.com/ascend-go/cann/zerocopy"
)

// TestRawHalfIO keeps float16 as float16: random half-precision bit
// patterns go in through WriteInputBits and WriteInputBytes, relu runs,
// and ReadOutputBits[uint16] and ReadOutputBytes give the output's bits,
// compared with relu applied to the bits directly (a negative or -0 half
// becomes +0; a NaN is left out of the input). ReadOutput[uint16] on the
// same output converts values, so it differs from the bits.
func TestRawHalfIO(t *testing.T) {
	rng := newRand(t)
	const n = 257
	for _, host := range []bool{false, true} {
		b, s := reluBinding(t, acl.Float16, n, host)
		in := make([]uint16, n)
		want := make([]uint16, n)
		for k := range in {
			for {
				in[k] = uint16(rng.Uint32())
				// No NaN, and no -0: Relu(-0) may keep the sign (IEEE max).
				if (in[k]&0x7c00 != 0x7c00 || in[k]&0x3ff == 0) && in[k] != 0x8000 {
					break
				}
			}
			want[k] = in[k]
			if in[k]&0x8000 != 0 {
				want[k] = 0
			}
		}
		require.NoError(t, zerocopy.WriteInputBits(b, 0, in))
		require.NoError(t, b.RunAsync(s))
		require.NoError(t, b.Wait(context.Background()))
		bits, err := zerocopy.ReadOutputBits[uint16](b, 0)
		require.NoError(t, err)
		require.Equal(t, want, bits, "host buffers %v", host)
		raw, err := b.ReadOutputBytes(0)
		require.NoError(t, err)
		require.Len(t, raw, 2*n)
		for k := range want {
			require.Equal(t, want[k], binary.LittleEndian.Uint16(raw[2*k:]), "byte read, element %d", k)
		}
		conv, err := zerocopy.ReadOutput[uint16](b, 0)
		require.NoError(t, err)
		for k := range want {
			require.Equal(t, uint16(floatx.F16ToF32(want[k])), conv[k], "ReadOutput converts element %d", k)
		}

		// The byte write is the bit write.
		inBytes := make([]byte, 2*n)
		for k := range in {
			binary.LittleEndian.PutUint16(inBytes[2*k:], in[n-1-k])
		}
		require.NoError(t, b.WriteInputBytes(0, inBytes))
		require.NoError(t, b.RunAsync(s))
		require.NoError(t, b.Wait(context.Background()))
		bits, err = zerocopy.ReadOutputBits[uint16](b, 0)
		require.NoError(t, err)
		for k := range bits {
			require.Equal(t, want[n-1-k], bits[k], "element %d after WriteInputBytes", k)
		}

		// A bit type of another size, or too much data, is refused.
		_, err = zerocopy.ReadOutputBits[uint32](b, 0)
		assert.Equal(t, acl.CodeInvalidParam, acl.CodeOf(err), "%v", err)
		assert.Equal(t, acl.CodeInvalidParam, acl.CodeOf(zerocopy.WriteInputBits(b, 0, make([]uint8, 2))))
		assert.Equal(t, acl.CodeInvalidParam, acl.CodeOf(b.WriteInputBytes(0, make([]byte, 2*n+1))))
		_, err = b.ReadOutputBytes(1)
		assert.Equal(t, acl.CodeInvalidParam, acl.CodeOf(err))
	}
}
