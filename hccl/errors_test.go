package hccl

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestResultNames(t *testing.T) {
	assert.Equal(t, "HCCL_E_OOM", EOOM.String())
	assert.EqualValues(t, 24, EOOM)
	assert.Equal(t, "HCCL_E_IN_STATUS", EInStatus.String())
	assert.EqualValues(t, 1041, EInStatus)
	assert.Equal(t, "HcclResult(77)", Result(77).String())
	assert.False(t, Result(77).Known())
	assert.Len(t, Results(), 26)
	for _, r := range Results() {
		assert.True(t, r.Known())
		if r != Success {
			assert.NotNil(t, resultClass[r], "every failure code has a class: %v", r)
		}
	}
	assert.NoError(t, Success.Err("HcclBarrier"))
}

func TestErrorIs(t *testing.T) {
	err := fmt.Errorf("wrapped: %w", Errorf("HcclAllReduce", EPara, "count %d vs %d", 3, 4))
	assert.ErrorIs(t, err, ErrPara)
	assert.NotErrorIs(t, err, ErrPtr)
	assert.ErrorIs(t, err, &Error{Code: EPara})
	assert.ErrorIs(t, err, &Error{Op: "HcclAllReduce", Code: EPara})
	assert.NotErrorIs(t, err, &Error{Op: "HcclBroadcast", Code: EPara})
	assert.Equal(t, "wrapped: HcclAllReduce: HCCL_E_PARA (1): count 3 vs 4", err.Error())
	assert.Equal(t, EPara, ResultOf(err))
	assert.Equal(t, Success, ResultOf(nil))
	assert.Equal(t, EInternal, ResultOf(errors.New("x")))
	assert.ErrorIs(t, EOOM.Err("HcclCommInitAll"), ErrMemory)
	assert.ErrorIs(t, ETimeout.Err("HcclBarrier"), ErrTimeout)
	assert.ErrorIs(t, ERemote.Err("HcclBatchGet"), ErrRemote)
	assert.ErrorIs(t, ENotSupport.Err("HcclBatchGet"), ErrNotSupported)
	assert.Equal(t, "X: HcclResult(99)", (&Error{Op: "X", Code: 99}).Error())
	assert.False(t, (&Error{Code: 99}).Is(nil))
}

// TestErrorfSaysCodeOnce: an *Error quoted inside another error of the
// same code is formatted without its code; one of another code keeps it.
// The caller's arguments are not modified.
func TestErrorfSaysCodeOnce(t *testing.T) {
	inner := Errorf("HcclAllReduce", ERemote, "rank %d lost", 3)
	args := []any{inner}
	outer := Errorf("HcclCommDestroy", ERemote, "queued work failed: %v", args...)
	assert.Equal(t, "HcclCommDestroy: HCCL_E_REMOTE (21): queued work failed: HcclAllReduce: rank 3 lost", outer.Error())
	assert.Same(t, inner, args[0])
	other := Errorf("HcclCommDestroy", EInternal, "queued work failed: %v", inner)
	assert.Equal(t, "HcclCommDestroy: HCCL_E_INTERNAL (4): queued work failed: HcclAllReduce: HCCL_E_REMOTE (21): rank 3 lost", other.Error())
	assert.Equal(t, "Op: HCCL_E_PARA (1)", (&Error{Op: "Op", Code: EPara}).Error())
}
