package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestUnitClasses(t *testing.T) {
	for _, u := range []string{"x_copy", "x_devcopy", "xmax_copy", "x_raw", "x_copyonly", "fm_ratio"} {
		assert.True(t, isRatioUnit(u), u)
	}
	for _, u := range []string{"ns/op", "MB/s", "busbw_GB/s", "Mreads/s", "copies/op", "ffi_calls/op", "x", "xfers", "B/op"} {
		assert.False(t, isRatioUnit(u), u)
	}
	assert.True(t, isAllocUnit("B/op"))
	assert.True(t, isAllocUnit("allocs/op"))
	assert.False(t, isAllocUnit("copies/op"))

	in := []string{"x_copy", "MB/s", "B/op", "busbw_GB/s", "ns/op", "allocs/op", "fm_ratio", "ffi_calls/op"}
	assert.Equal(t, []string{"ns/op", "MB/s", "busbw_GB/s", "ffi_calls/op", "B/op", "allocs/op", "x_copy", "fm_ratio"}, orderUnits(in))
	assert.Equal(t, "x_copy", in[0], "orderUnits must not reorder its input")
}

func TestFormatValue(t *testing.T) {
	for _, c := range []struct {
		v    float64
		unit string
		want string
	}{
		{5215708, "ns/op", "5.216ms"},
		{281528028, "ns/op", "281.5ms"},
		{905320, "ns/op", "905.3µs"},
		{12.5, "ns/op", "12.5ns"},
		{2.5e9, "ns/op", "2.5s"},
		{0.0015, "sec/op", "1.5ms"},
		{268800, "B/op", "262.5KiB"},
		{912, "B/op", "912B"},
		{3592, "allocs/op", "3592"},
		{19, "allocs/op", "19"},
		{12.57, "MB/s", "12.57"},
		{0.0002865, "x_copy", "0.0002865"},
		{0.5328, "x_copy", "0.5328"},
		{1.5, "x_copy", "1.500"},
		{18531.81, "MB/s", "18532"},
		{3.2e9, "B/s", "3.200G"},
		{0, "x_copy", "0"},
	} {
		assert.Equal(t, c.want, formatValue(c.v, c.unit), "%v %s", c.v, c.unit)
	}
}
