package onnx

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	pb "github.com/ascend-go/cann/ge/onnx/internal/onnxpb"
)

// ONNX TensorProto.DataType values (onnx.proto).
const (
	dtFloat    = 1
	dtUint8    = 2
	dtInt8     = 3
	dtUint16   = 4
	dtInt16    = 5
	dtInt32    = 6
	dtInt64    = 7
	dtString   = 8
	dtBool     = 9
	dtFloat16  = 10
	dtDouble   = 11
	dtUint32   = 12
	dtUint64   = 13
	dtBFloat16 = 16
)

// aclType maps an ONNX element type to the ACL one.
func aclType(t int32) (acl.DataType, bool) {
	switch t {
	case dtFloat:
		return acl.Float32, true
	case dtUint8:
		return acl.Uint8, true
	case dtInt8:
		return acl.Int8, true
	case dtUint16:
		return acl.Uint16, true
	case dtInt16:
		return acl.Int16, true
	case dtInt32:
		return acl.Int32, true
	case dtInt64:
		return acl.Int64, true
	case dtBool:
		return acl.Bool, true
	case dtFloat16:
		return acl.Float16, true
	case dtDouble:
		return acl.Float64, true
	case dtUint32:
		return acl.Uint32, true
	case dtUint64:
		return acl.Uint64, true
	case dtBFloat16:
		return acl.BFloat16, true
	}
	return acl.DTUndefined, false
}

func typeName(t int32) string {
	if n, ok := pb.TensorProto_DataType_name[t]; ok {
		return n
	}
	return "type " + strconv.Itoa(int(t))
}

// checkDims validates ONNX dims as a ge shape: no zero (empty tensors),
// no negative, within the limits.
func checkDims(dims []int64, dt acl.DataType) error {
	if len(dims) > ge.MaxRank {
		return fmt.Errorf("rank %d exceeds %d", len(dims), ge.MaxRank)
	}
	n := int64(max(dt.Size(), 1))
	for _, d := range dims {
		if d == 0 {
			return ErrEmptyTensor
		}
		if d < 0 || d > ge.MaxDim || n > ge.MaxTensorBytes/d {
			return fmt.Errorf("dims %v out of range", dims)
		}
		n *= d
	}
	return nil
}

// checkShape is checkDims allowing zero dims: an empty constant (opset
// 11's empty roi and scales, an empty axes list) is a value the importer
// reads; it refuses one only where it would become a graph tensor.
func checkShape(dims []int64, dt acl.DataType) error {
	nz := make([]int64, 0, len(dims))
	for _, d := range dims {
		if d != 0 {
			nz = append(nz, d)
		}
	}
	if len(dims) > ge.MaxRank {
		return fmt.Errorf("rank %d exceeds %d", len(dims), ge.MaxRank)
	}
	return checkDims(nz, dt)
}

// decodeTensor turns a TensorProto into a host tensor: dims, type, and the
// little-endian bytes from raw_data, the typed fields or an external file
// under dir (empty dir: external data refused).
func decodeTensor(t *pb.TensorProto, dir string) (ge.HostTensor, error) {
	dt, ok := aclType(t.GetDataType())
	if !ok {
		return ge.HostTensor{}, fmt.Errorf("%w: tensor %q has element type %s", ErrUnsupportedDataType, t.GetName(), typeName(t.GetDataType()))
	}
	dims := append([]int64(nil), t.GetDims()...)
	if err := checkShape(dims, dt); err != nil {
		return ge.HostTensor{}, fmt.Errorf("%w: tensor %q: %v", ErrInvalidModel, t.GetName(), err)
	}
	desc := ge.TensorDesc{DataType: dt, Format: acl.FormatND, Dims: dims}
	n := int(desc.NumElements())
	size := int(desc.Size())
	bad := func(what string, got int) error {
		return fmt.Errorf("%w: tensor %q (%s%v) has %d %s, want %d", ErrInvalidModel, t.GetName(), typeName(t.GetDataType()), dims, got, what, n)
	}
	if t.GetDataLocation() == pb.TensorProto_EXTERNAL {
		b, err := readExternal(t, dir, size)
		if err != nil {
			return ge.HostTensor{}, err
		}
		return ge.HostTensor{Desc: desc, Data: b}, nil
	}
	if raw := t.GetRawData(); raw != nil {
		if len(raw) != size {
			return ge.HostTensor{}, fmt.Errorf("%w: tensor %q raw_data holds %d bytes, %s needs %d", ErrInvalidModel, t.GetName(), len(raw), desc, size)
		}
		return ge.HostTensor{Desc: desc, Data: aligned(raw)}, nil
	}
	b := aligned(make([]byte, size))
	switch dt {
	case acl.Float32:
		v := t.GetFloatData()
		if len(v) != n {
			return ge.HostTensor{}, bad("float_data", len(v))
		}
		for i, x := range v {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
	case acl.Float64:
		v := t.GetDoubleData()
		if len(v) != n {
			return ge.HostTensor{}, bad("double_data", len(v))
		}
		for i, x := range v {
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
		}
	case acl.Int64:
		v := t.GetInt64Data()
		if len(v) != n {
			return ge.HostTensor{}, bad("int64_data", len(v))
		}
		for i, x := range v {
			binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
		}
	case acl.Uint32, acl.Uint64:
		v := t.GetUint64Data()
		if len(v) != n {
			return ge.HostTensor{}, bad("uint64_data", len(v))
		}
		for i, x := range v {
			if dt == acl.Uint32 {
				binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
			} else {
				binary.LittleEndian.PutUint64(b[8*i:], x)
			}
		}
	default: // int32_data carries int32 and every narrower type (float16/bfloat16 as bits)
		v := t.GetInt32Data()
		if len(v) != n {
			return ge.HostTensor{}, bad("int32_data", len(v))
		}
		es := dt.Size()
		for i, x := range v {
			switch es {
			case 1:
				b[i] = byte(x)
			case 2:
				binary.LittleEndian.PutUint16(b[2*i:], uint16(x))
			case 4:
				binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
			}
		}
	}
	return ge.HostTensor{Desc: desc, Data: b}, nil
}

// readExternal reads an external-data tensor: location (relative to dir,
// never escaping it), offset and length from external_data.
func readExternal(t *pb.TensorProto, dir string, size int) ([]byte, error) {
	var loc string
	var off, length int64 = 0, -1
	for _, kv := range t.GetExternalData() {
		var err error
		switch kv.GetKey() {
		case "location":
			loc = kv.GetValue()
		case "offset":
			off, err = strconv.ParseInt(kv.GetValue(), 10, 64)
		case "length":
			length, err = strconv.ParseInt(kv.GetValue(), 10, 64)
		}
		if err != nil || off < 0 {
			return nil, fmt.Errorf("%w: tensor %q: external_data %s=%q is not a valid size", ErrInvalidModel, t.GetName(), kv.GetKey(), kv.GetValue())
		}
	}
	if dir == "" {
		return nil, fmt.Errorf("%w: tensor %q keeps its data in %q; import with WithExternalDataDir", ErrInvalidModel, t.GetName(), loc)
	}
	clean := filepath.Clean(filepath.FromSlash(loc))
	if loc == "" || filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("%w: tensor %q: external data location %q must be a relative path inside the model directory", ErrInvalidModel, t.GetName(), loc)
	}
	if length >= 0 && length != int64(size) {
		return nil, fmt.Errorf("%w: tensor %q: external data length %d, tensor needs %d bytes", ErrInvalidModel, t.GetName(), length, size)
	}
	f, err := os.Open(filepath.Join(dir, clean))
	if err != nil {
		return nil, fmt.Errorf("%w: tensor %q: %v", ErrInvalidModel, t.GetName(), err)
	}
	defer f.Close()
	b := aligned(make([]byte, size))
	if _, err := f.ReadAt(b, off); err != nil {
		return nil, fmt.Errorf("%w: tensor %q: reading %d bytes at offset %d of %q: %v", ErrInvalidModel, t.GetName(), size, off, loc, err)
	}
	return b, nil
}

// aligned returns b on an 8-byte boundary (copying when it is not), so
// kernels can use float data in place.
func aligned(b []byte) []byte {
	if len(b) == 0 || uintptrOf(b)%8 == 0 {
		return b
	}
	w := make([]uint64, (len(b)+7)/8)
	c := bytesOf(w)[:len(b)]
	copy(c, b)
	return c
}

// DecodeTensor decodes a serialized ONNX TensorProto (as the backend test
// data's input_N.pb files hold) into a host tensor. External data is
// refused.
func DecodeTensor(data []byte) (ge.HostTensor, error) {
	var t pb.TensorProto
	if err := proto.Unmarshal(data, &t); err != nil {
		return ge.HostTensor{}, modelError(ErrInvalidModel, "not an ONNX TensorProto: %v", err)
	}
	h, err := decodeTensor(&t, "")
	if err != nil {
		return ge.HostTensor{}, modelError(kindOf(err), "%s", unwrapKind(err))
	}
	return h, nil
}
