package fallback

import (
	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
)

// modelDesc is an aclmdlDesc: a copy of a model's IO descriptions, filled
// by GetDesc. Guarded by modelTable.mu.
type modelDesc struct {
	inputs, outputs []ge.IODesc
	batches         []int64      // a dynamic-batch model's gears
	ranges          [][][2]int64 // a model with unknown dims: each input's dim ranges
	id              acl.ModelID
}

// CreateDesc is aclmdlCreateDesc: an empty description.
func (n *NPU) CreateDesc() (acl.ModelDescHandle, error) {
	if n == nil {
		return 0, acl.NilHandle("aclmdlCreateDesc", "fallback NPU")
	}
	return createHostObject(n, "aclmdlCreateDesc", &n.models.descs, &modelDesc{})
}

// GetDesc is aclmdlGetDesc: it fills d with the IO of a loaded model.
func (n *NPU) GetDesc(d acl.ModelDescHandle, id acl.ModelID) error {
	c, err := n.begin("aclmdlGetDesc", false)
	if err != nil {
		return err
	}
	defer n.exit()
	t := &n.models
	t.mu.Lock()
	defer t.mu.Unlock()
	desc := t.descs[d]
	if desc == nil {
		return c.badHandle("model description", uintptr(d))
	}
	md := t.models[id]
	if md == nil {
		return c.fail(acl.CodeGEExecModelIDInvalid, "model id %d is not loaded (never loaded, or already unloaded)", id)
	}
	desc.inputs, desc.outputs = md.m.Inputs, md.m.Outputs // the parsed model is immutable
	desc.batches, desc.id = md.batches, id
	desc.ranges = nil
	if md.dyn != nil {
		desc.ranges = md.dyn.ranges
	}
	return nil
}

// DestroyDesc is aclmdlDestroyDesc.
func (n *NPU) DestroyDesc(d acl.ModelDescHandle) error {
	if n == nil {
		return acl.NilHandle("aclmdlDestroyDesc", "fallback NPU")
	}
	return destroyHostObject(n, "aclmdlDestroyDesc", "model description", &n.models.descs, d)
}

// io returns IO i of a description (inputs when in), or nil for a bad
// handle or index.
func (n *NPU) io(d acl.ModelDescHandle, in bool, i uintptr) *ge.IODesc {
	if n == nil {
		return nil
	}
	return readHostObject(n, &n.models.descs, d, func(desc *modelDesc) *ge.IODesc {
		if list := desc.list(in); i < uintptr(len(list)) {
			return &list[i]
		}
		return nil
	})
}

// ioCount is the number of inputs (in) or outputs of a description; 0 for
// a bad handle.
func (n *NPU) ioCount(d acl.ModelDescHandle, in bool) uintptr {
	if n == nil {
		return 0
	}
	return readHostObject(n, &n.models.descs, d, func(desc *modelDesc) uintptr { return uintptr(len(desc.list(in))) })
}

// list is the inputs (in) or the outputs.
func (desc *modelDesc) list(in bool) []ge.IODesc {
	if in {
		return desc.inputs
	}
	return desc.outputs
}

// GetNumInputs is aclmdlGetNumInputs; 0 for a bad handle.
func (n *NPU) GetNumInputs(d acl.ModelDescHandle) uintptr { return n.ioCount(d, true) }

// GetNumOutputs is aclmdlGetNumOutputs; 0 for a bad handle.
func (n *NPU) GetNumOutputs(d acl.ModelDescHandle) uintptr { return n.ioCount(d, false) }

// GetInputSizeByIndex is aclmdlGetInputSizeByIndex: the tensor's bytes; 0
// for a bad handle or index.
func (n *NPU) GetInputSizeByIndex(d acl.ModelDescHandle, i uintptr) uintptr {
	if io := n.io(d, true, i); io != nil {
		return uintptr(io.Size)
	}
	return 0
}

// GetOutputSizeByIndex is aclmdlGetOutputSizeByIndex; 0 for a bad handle
// or index.
func (n *NPU) GetOutputSizeByIndex(d acl.ModelDescHandle, i uintptr) uintptr {
	if io := n.io(d, false, i); io != nil {
		return uintptr(io.Size)
	}
	return 0
}

func (n *NPU) dims(op string, d acl.ModelDescHandle, in bool, i uintptr, dims *acl.IODims) error {
	c, err := n.hostCall(op)
	if err != nil {
		return err
	}
	defer n.exit()
	if dims == nil {
		return c.fail(acl.CodeInvalidParam, "null dims")
	}
	io := n.io(d, in, i)
	if io == nil {
		return c.fail(acl.CodeInvalidParam, "model description 0x%x has no %s %d (unknown handle, not filled by aclmdlGetDesc, or index out of range)", uintptr(d), inOut(in), i)
	}
	fillDims(dims, io.Name, io.Dims)
	return nil
}

// fillDims writes a name (NUL-terminated, cut to fit) and dims.
func fillDims(dims *acl.IODims, name string, shape []int64) {
	*dims = acl.IODims{}
	copy(dims.Name[:acl.MaxTensorNameLen-1], name)
	dims.DimCount = uintptr(copy(dims.Dims[:], shape))
}

func inOut(in bool) string {
	if in {
		return "input"
	}
	return "output"
}

// GetInputDims is aclmdlGetInputDims.
func (n *NPU) GetInputDims(d acl.ModelDescHandle, i uintptr, dims *acl.IODims) error {
	return n.dims("aclmdlGetInputDims", d, true, i, dims)
}

// GetOutputDims is aclmdlGetOutputDims.
func (n *NPU) GetOutputDims(d acl.ModelDescHandle, i uintptr, dims *acl.IODims) error {
	return n.dims("aclmdlGetOutputDims", d, false, i, dims)
}

// GetInputNameByIndex is aclmdlGetInputNameByIndex; "" for a bad handle or
// index (NULL in C).
func (n *NPU) GetInputNameByIndex(d acl.ModelDescHandle, i uintptr) string {
	if io := n.io(d, true, i); io != nil {
		return io.Name
	}
	return ""
}

// GetOutputNameByIndex is aclmdlGetOutputNameByIndex; "" for a bad handle
// or index.
func (n *NPU) GetOutputNameByIndex(d acl.ModelDescHandle, i uintptr) string {
	if io := n.io(d, false, i); io != nil {
		return io.Name
	}
	return ""
}

// GetInputIndexByName is aclmdlGetInputIndexByName: ACL_ERROR_INVALID_PARAM
// for a bad handle or a name no input has.
func (n *NPU) GetInputIndexByName(d acl.ModelDescHandle, name string) (uintptr, error) {
	c, err := n.hostCall("aclmdlGetInputIndexByName")
	if err != nil {
		return 0, err
	}
	defer n.exit()
	t := &n.models
	t.mu.RLock()
	desc := t.descs[d]
	t.mu.RUnlock()
	if desc == nil {
		return 0, c.badHandle("model description", uintptr(d))
	}
	for i := range desc.inputs {
		if desc.inputs[i].Name == name {
			return uintptr(i), nil
		}
	}
	return 0, c.fail(acl.CodeInvalidParam, "the model has no input named %q", name)
}

// GetInputDataType is aclmdlGetInputDataType; ACL_DT_UNDEFINED for a bad
// handle or index.
func (n *NPU) GetInputDataType(d acl.ModelDescHandle, i uintptr) acl.DataType {
	if io := n.io(d, true, i); io != nil {
		return io.DataType
	}
	return acl.DTUndefined
}

// GetOutputDataType is aclmdlGetOutputDataType; ACL_DT_UNDEFINED for a bad
// handle or index.
func (n *NPU) GetOutputDataType(d acl.ModelDescHandle, i uintptr) acl.DataType {
	if io := n.io(d, false, i); io != nil {
		return io.DataType
	}
	return acl.DTUndefined
}

// GetInputFormat is aclmdlGetInputFormat; ACL_FORMAT_UNDEFINED for a bad
// handle or index.
func (n *NPU) GetInputFormat(d acl.ModelDescHandle, i uintptr) acl.Format {
	if io := n.io(d, true, i); io != nil {
		return io.Format
	}
	return acl.FormatUndefined
}

// GetOutputFormat is aclmdlGetOutputFormat; ACL_FORMAT_UNDEFINED for a bad
// handle or index.
func (n *NPU) GetOutputFormat(d acl.ModelDescHandle, i uintptr) acl.Format {
	if io := n.io(d, false, i); io != nil {
		return io.Format
	}
	return acl.FormatUndefined
}
