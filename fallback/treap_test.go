package fallback

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTreapAgainstModel checks random inserts and deletes against a map,
// and every lookup against a linear scan of the sorted keys.
func TestTreapAgainstModel(t *testing.T) {
	r := newRand(t)
	var tr treap[int]
	model := map[uint64]int{}
	for i := range 20000 {
		k := r.Uint64N(4096)
		switch r.IntN(3) {
		case 0, 1:
			tr.insert(k, i)
			model[k] = i
		case 2:
			_, had := model[k]
			require.Equal(t, had, tr.delete(k))
			delete(model, k)
		}
		require.Equal(t, len(model), tr.Len())
		if i%97 != 0 {
			continue
		}
		keys := make([]uint64, 0, len(model))
		for k := range model {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		walked := []uint64{}
		tr.each(func(k uint64, v int) bool {
			require.Equal(t, model[k], v)
			walked = append(walked, k)
			return true
		})
		require.Equal(t, keys, walked)
		for range 50 {
			q := r.Uint64N(4200)
			v, ok := tr.get(q)
			mv, mok := model[q]
			require.Equal(t, mok, ok)
			require.Equal(t, mv, v)
			// floor: greatest key ≤ q; ceil: smallest key ≥ q.
			i, found := slices.BinarySearch(keys, q)
			fk, _, fok := tr.floor(q)
			switch {
			case found:
				require.True(t, fok)
				require.Equal(t, q, fk)
			case i == 0:
				require.False(t, fok)
			default:
				require.True(t, fok)
				require.Equal(t, keys[i-1], fk)
			}
			ck, _, cok := tr.ceil(q)
			if i < len(keys) {
				require.True(t, cok)
				require.Equal(t, keys[i], ck)
			} else {
				require.False(t, cok)
			}
		}
		if len(keys) > 0 {
			lk, _, ok := tr.last()
			require.True(t, ok)
			require.Equal(t, keys[len(keys)-1], lk)
		}
	}
}
