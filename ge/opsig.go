package ge

import (
	"errors"
	"fmt"
)

// Errors of CheckOpCall, by what did not match the op's signature. Single-op
// execution maps them to ACL's op codes (ACL_ERROR_OP_INPUT_NOT_MATCH,
// ACL_ERROR_OP_ATTR_NOT_MATCH).
var (
	ErrOpNotFound    = errors.New("ge: no such op")
	ErrOpInputs      = errors.New("ge: op inputs do not match")
	ErrOpAttrs       = errors.New("ge: op attributes do not match")
	ErrOpNotRunnable = errors.New("ge: op is not a kernel")
)

// OpByName returns the kernel op registered under a GE op type name ("Add",
// "MatMul", …). Boundary ops (Data, Const, NetOutput) are not kernels and
// are not found.
func OpByName(name string) (OpType, bool) {
	for t, s := range opSpecs {
		if s.name == name && s.class != classBoundary {
			return t, true
		}
	}
	return 0, false
}

// CheckOpCall checks a call of op t with the given input descriptions and
// attributes against the op's signature and infers its outputs, as a
// single-op compile does. Errors wrap ErrOpNotFound, ErrOpInputs or
// ErrOpAttrs.
func CheckOpCall(t OpType, in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	s, ok := opSpecs[t]
	if !ok || s.class == classBoundary {
		return nil, fmt.Errorf("%w: op type %v", ErrOpNotFound, t)
	}
	if len(in) < s.minIn || (s.maxIn >= 0 && len(in) > s.maxIn) {
		return nil, fmt.Errorf("%w: %s takes %d to %d inputs, got %d", ErrOpInputs, s.name, s.minIn, s.maxIn, len(in))
	}
	for k, v := range a {
		want, ok := s.attrs[k]
		if !ok {
			return nil, fmt.Errorf("%w: %s has no attribute %q", ErrOpAttrs, s.name, k)
		}
		if v.Kind != want {
			return nil, fmt.Errorf("%w: %s attribute %q has kind %d, want %d", ErrOpAttrs, s.name, k, v.Kind, want)
		}
	}
	out, err := inferOp(t, in, a)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrOpInputs, s.name, err)
	}
	return out, nil
}
