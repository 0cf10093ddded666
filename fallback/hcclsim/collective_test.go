package hcclsim

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// TestSetArgsCopiesEveryField: a record takes every field of the call's
// descriptor (setArgs copies them one by one, so that the caller's
// descriptor can live on its stack), and its slices are copies the caller
// can change afterwards. A record reused for a smaller AlltoAllV keeps no
// entry of the larger one before it.
func TestSetArgsCopiesEveryField(t *testing.T) {
	rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	random := func(n int) *opDesc {
		d := &opDesc{}
		v := reflect.ValueOf(d).Elem()
		for i := range v.NumField() {
			f := v.Field(i)
			switch f.Kind() {
			case reflect.Slice:
				s := make([]uint64, n)
				for k := range s {
					s[k] = rng.Uint64()
				}
				f.Set(reflect.ValueOf(s))
			case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
				f.SetUint(1 + rng.Uint64N(200))
			default:
				t.Fatalf("opDesc.%s: a field of kind %v this test does not fill", v.Type().Field(i).Name, f.Kind())
			}
		}
		return d
	}
	r := &collRec{}
	for _, n := range []int{8, 3, 5} {
		d := random(n)
		send, recv := unsafe.Pointer(&n), unsafe.Pointer(&rng)
		r.setArgs(d, send, recv, 11, 13)
		want := *d
		want.SendCounts = append([]uint64(nil), d.SendCounts...)
		want.SDispls = append([]uint64(nil), d.SDispls...)
		want.RecvCounts = append([]uint64(nil), d.RecvCounts...)
		want.RDispls = append([]uint64(nil), d.RDispls...)
		for _, s := range [][]uint64{d.SendCounts, d.SDispls, d.RecvCounts, d.RDispls} {
			for k := range s {
				s[k] = 0 // the caller's copy changes after the call
			}
		}
		require.Equal(t, want, r.d)
		require.Equal(t, []any{send, recv, uint64(11), uint64(13)}, []any{r.send, r.recv, r.sendBytes, r.recvBytes})
	}
}
