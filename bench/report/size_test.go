package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		p    part
		want float64
		ok   bool
	}{
		{part{"size", "16MiB"}, 16 << 20, true},
		{part{"size", "1KiB"}, 1 << 10, true},
		{part{"bytes", "65536"}, 65536, true},
		{part{"bytes", "4K"}, 4096, true},
		{part{"size", "1.5MB"}, 1.5e6, true},
		{part{"", "64B"}, 64, true},
		{part{"", "1MiB"}, 1 << 20, true},
		{part{"", "160B"}, 160, true},
		{part{"", "2GiB"}, 2 << 30, true},
		{part{"", "64"}, 0, false}, // a bare number may count anything
		{part{"", "4K"}, 0, false}, // so may 4K
		{part{"", "inproc"}, 0, false},
		{part{"", "B"}, 0, false},
		{part{"ranks", "4"}, 0, false},
		{part{"batch", "64B"}, 0, false}, // only size= and bytes= keys
		{part{"size", "big"}, 0, false},
		{part{"size", "-1KiB"}, 0, false},
	} {
		got, ok := parseSize(c.p)
		assert.Equal(t, c.ok, ok, "%v", c.p)
		assert.Equal(t, c.want, got, "%v", c.p)
	}
}

func TestSizeOfGroups(t *testing.T) {
	size, rest, ok := sizeOf([]part{{"", "inproc"}, {"ranks", "2"}, {"size", "16MiB"}})
	assert.True(t, ok)
	assert.Equal(t, float64(16<<20), size)
	assert.Equal(t, "inproc/ranks=2", joinParts(rest))

	size, rest, ok = sizeOf([]part{{"", "inproc"}, {"", "64B"}})
	assert.True(t, ok)
	assert.Equal(t, 64.0, size)
	assert.Equal(t, "inproc", joinParts(rest))

	// The last size-like part is the axis; an earlier one stays in the group.
	size, rest, ok = sizeOf([]part{{"", "row=64B"}, {"", "8B"}, {"bytes", "1024"}, {"", "h2d"}})
	assert.True(t, ok)
	assert.Equal(t, 1024.0, size)
	assert.Equal(t, "row=64B/8B/h2d", joinParts(rest))

	_, _, ok = sizeOf([]part{{"", "inproc"}, {"ranks", "2"}})
	assert.False(t, ok)
}

func TestFormatSizeAndTicks(t *testing.T) {
	assert.Equal(t, "64B", formatSize(64))
	assert.Equal(t, "1KiB", formatSize(1024))
	assert.Equal(t, "1.5KiB", formatSize(1536))
	assert.Equal(t, "16MiB", formatSize(16<<20))
	assert.Equal(t, "2GiB", formatSize(2<<30))

	var labels []string
	for _, tk := range sizeTicks(1<<10, 64<<20) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	assert.Equal(t, []string{"1KiB", "4KiB", "16KiB", "64KiB", "256KiB", "1MiB", "4MiB", "16MiB", "64MiB"}, labels)
	assert.Len(t, sizeTicks(1<<10, 64<<20), 17, "a tick at every power of two")

	labels = nil
	for _, tk := range sizeTicks(64, 1<<20) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	assert.Equal(t, []string{"64B", "256B", "1KiB", "4KiB", "16KiB", "64KiB", "256KiB", "1MiB"}, labels)
	assert.Nil(t, sizeTicks(0, 10))
	assert.Nil(t, sizeTicks(8, 8))
}
