package acl_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ascend-go/cann/acl"
)

// TestFormatNames: the FRACTAL_NZ layouts with an explicit C0 (50-54) print
// the names enum aclFormat gives them (hicann/runtime
// include/external/acl/acl_base_rt.h), not a shortened "ACL_FORMAT_C0_*".
func TestFormatNames(t *testing.T) {
	want := map[acl.Format]string{
		50: "ACL_FORMAT_FRACTAL_NZ_C0_16",
		51: "ACL_FORMAT_FRACTAL_NZ_C0_32",
		52: "ACL_FORMAT_FRACTAL_NZ_C0_2",
		53: "ACL_FORMAT_FRACTAL_NZ_C0_4",
		54: "ACL_FORMAT_FRACTAL_NZ_C0_8",
		29: "ACL_FORMAT_FRACTAL_NZ",
		33: "ACL_FRACTAL_Z_3D",
		-1: "ACL_FORMAT_UNDEFINED",
	}
	for f, name := range want {
		assert.Equal(t, name, f.String(), "format %d", int32(f))
	}
	assert.Equal(t, acl.Format(51), acl.FormatFractalNZC032)
	assert.Equal(t, acl.Format(54), acl.FormatFractalNZC08)
	assert.Equal(t, "aclFormat(55)", acl.Format(55).String())
}
