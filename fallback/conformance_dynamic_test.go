package fallback_test

import (
	"encoding/binary"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/acl/acltest"
)

// dynamicAddModel builds the conformance suite's model with unknown dims
// as ONNX bytes: one Add(input, scalar addend) per ModelIO, every -1 dim
// a symbolic dim of its own. The fallback loads it as ATC's -1 model
// (fallback/model_dynamic.go). The bytes are written with protowire
// (field numbers of onnx.proto), so the test needs no ONNX tooling.
func dynamicAddModel(ios []acltest.ModelIO) ([]byte, error) {
	msg := func(b []byte, num protowire.Number, m []byte) []byte {
		return protowire.AppendBytes(protowire.AppendTag(b, num, protowire.BytesType), m)
	}
	str := func(b []byte, num protowire.Number, s string) []byte {
		return protowire.AppendString(protowire.AppendTag(b, num, protowire.BytesType), s)
	}
	varint := func(b []byte, num protowire.Number, v uint64) []byte {
		return protowire.AppendVarint(protowire.AppendTag(b, num, protowire.VarintType), v)
	}
	valueInfo := func(name string, elem uint64, dims []int64, prefix string) []byte {
		var shape []byte
		for i, d := range dims {
			var dim []byte
			if d < 0 {
				dim = str(dim, 2, fmt.Sprintf("%s_d%d", prefix, i)) // dim_param
			} else {
				dim = varint(dim, 1, uint64(d)) // dim_value
			}
			shape = msg(shape, 1, dim)
		}
		tt := msg(varint(nil, 1, elem), 2, shape) // TypeProto.Tensor{elem_type, shape}
		return msg(str(nil, 1, name), 2, msg(nil, 1, tt))
	}
	var graph []byte
	for k, io := range ios {
		elem := uint64(1) // FLOAT
		if io.DataType == acl.Int32 {
			elem = 6 // INT32
		} else if io.DataType != acl.Float32 {
			return nil, fmt.Errorf("io %d: %v is not float32 or int32", k, io.DataType)
		}
		c := fmt.Sprintf("%s_addend", io.In)
		node := str(str(str(str(nil, 1, io.In), 1, c), 2, io.Out), 4, "Add")
		graph = msg(graph, 1, node)
		raw := binary.LittleEndian.AppendUint32(nil, io.Addend)
		tensor := msg(str(varint(nil, 2, elem), 8, c), 9, raw) // data_type, name, raw_data
		graph = msg(graph, 5, tensor)
		graph = msg(graph, 11, valueInfo(io.In, elem, io.Dims, io.In))
		graph = msg(graph, 12, valueInfo(io.Out, elem, io.Dims, io.In))
	}
	graph = str(graph, 2, "dynamic_add")
	model := varint(nil, 1, 8)                            // ir_version
	model = msg(model, 8, varint(str(nil, 1, ""), 2, 13)) // opset_import {"" 13}
	return msg(model, 7, graph), nil
}
