package dl

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCStringRoundTrip: random strings without NUL go to C form and back
// unchanged; a NUL anywhere is refused; GoString stops at MaxCString.
func TestCStringRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		b := make([]byte, rng.IntN(300))
		for i := range b {
			b[i] = byte(1 + rng.IntN(255))
		}
		c, ok := CString(string(b))
		require.True(t, ok)
		require.Len(t, c, len(b)+1)
		assert.Equal(t, string(b), GoString(uintptr(unsafe.Pointer(&c[0]))))
		if len(b) > 0 {
			b[rng.IntN(len(b))] = 0
			_, ok = CString(string(b))
			assert.False(t, ok)
		}
	}
	assert.Equal(t, "", GoString(0))
	long := []byte(strings.Repeat("x", MaxCString+10) + "\x00")
	assert.Len(t, GoString(uintptr(unsafe.Pointer(&long[0]))), MaxCString)
}

// TestTable: each entry gets its own slot, in order.
func TestTable(t *testing.T) {
	slots := make([]uintptr, 3)
	tab := Table([]Entry{{Name: "a"}, {Name: "b", Optional: true}, {Name: "c"}}, slots)
	require.Len(t, tab, 3)
	for i, s := range tab {
		assert.Same(t, &slots[i], s.Slot)
	}
	assert.Equal(t, "b", tab[1].Name)
	assert.True(t, tab[1].Optional)
	assert.False(t, tab[2].Optional)
}
