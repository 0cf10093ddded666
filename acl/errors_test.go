package acl_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
)

// TestErrorfSaysCodeOnce: an *Error quoted inside another error of the
// same code is formatted without its code; one of another code keeps it.
func TestErrorfSaysCodeOnce(t *testing.T) {
	inner := acl.Errorf("ge.ParseModel", acl.CodeParseModel, "bad magic %q", "garbage ")
	args := []any{inner}
	outer := acl.Errorf("aclmdlLoadFromMem", acl.CodeParseModel, "cannot parse the model: %v", args...)
	assert.Equal(t, `aclmdlLoadFromMem: ACL_ERROR_PARSE_MODEL (100013): cannot parse the model: ge.ParseModel: bad magic "garbage "`, outer.Error())
	assert.Same(t, inner, args[0], "the caller's arguments are not modified")
	other := acl.Errorf("aclmdlExecute", acl.CodeGEInternalError, "%v", inner)
	assert.Contains(t, other.Error(), "ge.ParseModel: ACL_ERROR_PARSE_MODEL (100013): bad magic")
}

// TestLoadErrorSaysCodeOnce: loading bytes that are not a model on the
// fallback reports ACL_ERROR_GE_PARAM_INVALID (as GE's ParseModelContent
// does) once, not again in its message.
func TestLoadErrorSaysCodeOnce(t *testing.T) {
	_, _, dev := open(t)
	_, err := dev.LoadModel([]byte("not a model, not a model, not a model, not a model"))
	require.Error(t, err)
	assert.Equal(t, acl.CodeGEParamInvalid, acl.CodeOf(err))
	assert.Equal(t, 1, strings.Count(err.Error(), "ACL_ERROR_GE_PARAM_INVALID"), err.Error())
	assert.Equal(t, 1, strings.Count(err.Error(), "145000"), err.Error())
}
