package ge

import (
	"maps"
	"slices"
)

// AttrKind is the type of an attribute value (a plain value, safe for
// concurrent use).
type AttrKind uint8

// Attribute kinds. The values are part of the model format.
const (
	AttrInt    AttrKind = 1
	AttrFloat  AttrKind = 2
	AttrInts   AttrKind = 3
	AttrString AttrKind = 4
	AttrBool   AttrKind = 5
)

// Attr is one attribute value; Kind says which field holds it. It is a
// plain value, safe for concurrent reads.
type Attr struct {
	Kind AttrKind
	I    int64   // AttrInt, and AttrBool as 0/1
	F    float64 // AttrFloat
	L    []int64 // AttrInts
	S    string  // AttrString
}

// IntAttr, FloatAttr, IntsAttr, StringAttr and BoolAttr build attribute values.
func IntAttr(v int64) Attr { return Attr{Kind: AttrInt, I: v} }

// FloatAttr builds a float attribute.
func FloatAttr(v float64) Attr { return Attr{Kind: AttrFloat, F: v} }

// IntsAttr builds an int-list attribute (the slice is copied).
func IntsAttr(v []int64) Attr { return Attr{Kind: AttrInts, L: cloneDims(v)} }

// StringAttr builds a string attribute.
func StringAttr(v string) Attr { return Attr{Kind: AttrString, S: v} }

// BoolAttr builds a boolean attribute.
func BoolAttr(v bool) Attr {
	if v {
		return Attr{Kind: AttrBool, I: 1}
	}
	return Attr{Kind: AttrBool}
}

// Attrs holds an op's attributes by name. The accessors return the default
// when the attribute is missing or of another kind. An Attrs is not safe for
// concurrent mutation; compiled models never mutate theirs.
type Attrs map[string]Attr

// Int returns the int attribute k, or def.
func (a Attrs) Int(k string, def int64) int64 {
	if v, ok := a[k]; ok && v.Kind == AttrInt {
		return v.I
	}
	return def
}

// Float returns the float attribute k, or def.
func (a Attrs) Float(k string, def float64) float64 {
	if v, ok := a[k]; ok && v.Kind == AttrFloat {
		return v.F
	}
	return def
}

// Ints returns the int-list attribute k, or nil.
func (a Attrs) Ints(k string) []int64 {
	if v, ok := a[k]; ok && v.Kind == AttrInts {
		return v.L
	}
	return nil
}

// String returns the string attribute k, or "".
func (a Attrs) String(k string) string {
	if v, ok := a[k]; ok && v.Kind == AttrString {
		return v.S
	}
	return ""
}

// Bool returns the boolean attribute k, or false.
func (a Attrs) Bool(k string) bool {
	v, ok := a[k]
	return ok && v.Kind == AttrBool && v.I != 0
}

// Clone returns a deep copy.
func (a Attrs) Clone() Attrs {
	if a == nil {
		return nil
	}
	c := make(Attrs, len(a))
	for k, v := range a {
		v.L = cloneDims(v.L)
		c[k] = v
	}
	return c
}

// keys returns the attribute names in sorted order (the serialised order).
func (a Attrs) keys() []string { return slices.Sorted(maps.Keys(a)) }

// Attribute names used by the built-in ops.
const (
	AttrTransposeA = "transpose_a" // MatMul: bool
	AttrTransposeB = "transpose_b" // MatMul: bool
	AttrAxis       = "axis"        // Softmax, Gather, Concat: int (negative counts from the end)
	AttrEpsilon    = "epsilon"     // LayerNorm, RMSNorm: float
	AttrShape      = "shape"       // Reshape: ints, one -1 allowed
	AttrBegin      = "begin"       // Slice: ints
	AttrSize       = "size"        // Slice: ints, -1 means to the end
	AttrDstType    = "dst_type"    // Cast: int (acl.DataType)
	AttrIndex      = "index"       // Data: int, the model input index
	// AttrNegativeIndices makes Gather accept indices in [-dim, 0) as
	// counting from the end (ONNX Gather): bool.
	AttrNegativeIndices = "negative_indices"
)
