package ge_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/ge/getest"
)

// FuzzParseModel feeds arbitrary bytes to ParseModel, both as given and with
// the header's length and checksum repaired (so mutations reach the section
// decoder and the validator). Rejections must be *acl.Error with a model
// code; an accepted model must serialise again and, when small, run in the
// reference interpreter without panicking.
func FuzzParseModel(f *testing.F) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, m := range sampleModels(f, r) {
		b, err := m.MarshalBinary()
		require.NoError(f, err)
		f.Add(b)
	}
	f.Add([]byte(ge.ModelMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, b := range [][]byte{data, fixHeader(append([]byte(nil), data...))} {
			m, err := ge.ParseModel(b)
			if err != nil {
				code := acl.CodeOf(err)
				if code != acl.CodeInvalidFileSize && code != acl.CodeParseModel && code != acl.CodeDeserializeModel {
					t.Fatalf("unexpected code %v: %v", code, err)
				}
				continue
			}
			out, err := m.MarshalBinary()
			if err != nil {
				t.Fatalf("accepted model does not serialise: %v", err)
			}
			if _, err := ge.ParseModel(out); err != nil {
				t.Fatalf("re-serialised model does not parse: %v", err)
			}
			if m.MemorySize > 1<<20 || m.WeightSize > 1<<20 {
				continue
			}
			in := make([][]byte, len(m.Inputs))
			for i, d := range m.Inputs {
				in[i] = make([]byte, d.Size)
			}
			_, _ = getest.Run(m, in) // errors allowed (gather indices), panics not
		}
	})
}
