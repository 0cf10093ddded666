package fallback

import (
	"os"
	"unsafe"

	"github.com/ascend-go/cann/acl"
)

// modelConfig is an aclmdlConfigHandle: the options of LoadWithConfig.
// Guarded by modelTable.mu.
type modelConfig struct {
	set        uint64 // bit a: attribute a was set
	loadType   uintptr
	path       string
	mem        unsafe.Pointer
	memSize    uintptr
	weight     unsafe.Pointer
	weightSize uintptr
	work       unsafe.Pointer
	workSize   uintptr
	optimize   uintptr
}

// mdlWithoutGraphInt32 is ACL_MDL_WITHOUT_GRAPH_INT32 (hicann/ge only),
// an int32 attribute the fallback does not model.
const mdlWithoutGraphInt32 acl.ModelConfigAttr = 28

// maxPathLen bounds the model path read from a PATH_PTR value.
const maxPathLen = 4096

// CreateConfigHandle is aclmdlCreateConfigHandle.
func (n *NPU) CreateConfigHandle() (acl.ModelConfigHandle, error) {
	if n == nil {
		return 0, acl.NilHandle("aclmdlCreateConfigHandle", "fallback NPU")
	}
	return createHostObject(n, "aclmdlCreateConfigHandle", &n.models.configs, &modelConfig{})
}

// DestroyConfigHandle is aclmdlDestroyConfigHandle.
func (n *NPU) DestroyConfigHandle(h acl.ModelConfigHandle) error {
	if n == nil {
		return acl.NilHandle("aclmdlDestroyConfigHandle", "fallback NPU")
	}
	return destroyHostObject(n, "aclmdlDestroyConfigHandle", "config handle", &n.models.configs, h)
}

// SetConfigOpt is aclmdlSetConfigOpt. value points at the value; for a
// pointer-valued attribute it points at the pointer. valueSize must be the
// value's size (8 for size_t and pointers, 4 for int32); a wrong size, a
// null value or a value outside the attribute's range gives
// ACL_ERROR_INVALID_PARAM. Attributes of features the NPU does not model
// (queues, kernels, external tasks, FIFOs) give ACL_ERROR_FEATURE_UNSUPPORTED.
func (n *NPU) SetConfigOpt(h acl.ModelConfigHandle, attr acl.ModelConfigAttr, value unsafe.Pointer, valueSize uintptr) error {
	if n == nil {
		return acl.NilHandle("aclmdlSetConfigOpt", "fallback NPU")
	}
	return changeHostObject(n, "aclmdlSetConfigOpt", "config handle", &n.models.configs, h, func(c *call, cfg *modelConfig) error {
		return c.setConfigOpt(cfg, attr, value, valueSize)
	})
}

// setConfigOpt checks and stores one attribute; modelTable.mu is held.
func (c *call) setConfigOpt(cfg *modelConfig, attr acl.ModelConfigAttr, value unsafe.Pointer, valueSize uintptr) error {
	if value == nil {
		return c.fail(acl.CodeInvalidParam, "null value for attribute %d", attr)
	}
	want := uintptr(8)
	if attr == acl.MdlPriorityInt32 || attr == mdlWithoutGraphInt32 {
		want = 4
	}
	if attr < 0 || attr > acl.MdlFIFOSizet+2 {
		return c.fail(acl.CodeInvalidParam, "undefined model config attribute %d", attr)
	}
	if valueSize != want {
		return c.fail(acl.CodeInvalidParam, "attribute %d takes a %d-byte value, got %d bytes", attr, want, valueSize)
	}
	var size uintptr
	var ptr unsafe.Pointer
	if want == 8 {
		size, ptr = *(*uintptr)(value), *(*unsafe.Pointer)(value)
	}
	switch attr {
	case acl.MdlPriorityInt32:
		if p := *(*int32)(value); p < 0 || p > 7 {
			return c.fail(acl.CodeInvalidParam, "priority %d is outside [0, 7]", p)
		}
	case acl.MdlLoadTypeSizet:
		if size < acl.MdlLoadFromFile || size > acl.MdlLoadFromMemWithQ {
			return c.fail(acl.CodeInvalidParam, "load type %d is not an ACL_MDL_LOAD_* value", size)
		}
		cfg.loadType = size
	case acl.MdlPathPtr:
		if ptr == nil {
			return c.fail(acl.CodeInvalidParam, "null model path")
		}
		path, ok := cString(ptr)
		if !ok {
			return c.fail(acl.CodeInvalidParam, "model path is not NUL-terminated within %d bytes", maxPathLen)
		}
		cfg.path = path
	case acl.MdlMemAddrPtr:
		cfg.mem = ptr
	case acl.MdlMemSizet:
		cfg.memSize = size
	case acl.MdlWeightAddrPtr:
		cfg.weight = ptr
	case acl.MdlWeightSizet:
		cfg.weightSize = size
	case acl.MdlWorkspaceAddrPtr:
		cfg.work = ptr
	case acl.MdlWorkspaceSizet:
		cfg.workSize = size
	case acl.MdlWorkspaceMemOptimize:
		if size != acl.WorkspaceMemOptimizeDefault && size != acl.WorkspaceMemOptimizeInputOutput {
			return c.fail(acl.CodeInvalidParam, "ACL_MDL_WORKSPACE_MEM_OPTIMIZE value %d is not 0 (default) or 1 (input/output)", size)
		}
		cfg.optimize = size
	case acl.MdlMemMallocPolicySizet:
		if !acl.MemMallocPolicy(size).Valid() {
			return c.fail(acl.CodeInvalidParam, "undefined memory policy %d", size)
		}
	default:
		return c.fail(acl.CodeFeatureUnsupported, "model config attribute %d is not supported by the fallback", attr)
	}
	cfg.set |= 1 << uint(attr)
	return nil
}

// cString reads a NUL-terminated string of at most maxPathLen bytes.
func cString(p unsafe.Pointer) (string, bool) {
	for i := range maxPathLen {
		if *(*byte)(unsafe.Add(p, i)) == 0 {
			return string(unsafe.Slice((*byte)(p), i)), true
		}
	}
	return "", false
}

// LoadWithConfig is aclmdlLoadWithConfig: the load type decides which
// attributes are required (model path or memory and size; for the
// WITH_MEM types also the workspace and weight memory). Missing ones give
// ACL_ERROR_INVALID_PARAM; queue load types ACL_ERROR_FEATURE_UNSUPPORTED.
// WORKSPACE_MEM_OPTIMIZE = 1 makes the work memory exclude IO: every IO
// must then be a device buffer of the caller.
func (n *NPU) LoadWithConfig(h acl.ModelConfigHandle) (acl.ModelID, error) {
	c, err := n.begin("aclmdlLoadWithConfig", true)
	if err != nil {
		return 0, err
	}
	defer n.exit()
	t := &n.models
	t.mu.RLock()
	p := t.configs[h]
	var cfg modelConfig
	if p != nil {
		cfg = *p
	}
	t.mu.RUnlock()
	if p == nil {
		return 0, c.badHandle("config handle", uintptr(h))
	}
	need := func(attrs ...acl.ModelConfigAttr) error {
		for _, a := range attrs {
			if cfg.set&(1<<uint(a)) == 0 {
				return c.fail(acl.CodeInvalidParam, "load type %d needs model config attribute %d, which is not set", cfg.loadType, a)
			}
		}
		return nil
	}
	if cfg.set&(1<<uint(acl.MdlLoadTypeSizet)) == 0 {
		return 0, c.fail(acl.CodeInvalidParam, "ACL_MDL_LOAD_TYPE_SIZET is not set")
	}
	spec := loadSpec{excludeIO: cfg.optimize == acl.WorkspaceMemOptimizeInputOutput}
	switch cfg.loadType {
	case acl.MdlLoadFromFile, acl.MdlLoadFromFileWithMem:
		if err := need(acl.MdlPathPtr); err != nil {
			return 0, err
		}
		blob, rerr := os.ReadFile(cfg.path)
		if rerr != nil {
			// hicann/ge runtime/om2/om2_model_executor.cc:1721-1732
			return 0, c.fail(acl.CodeGEExecModelPathInvalid, "model file path %q is invalid: %v", cfg.path, rerr)
		}
		if len(blob) == 0 {
			return 0, c.fail(acl.CodeGEExecModelDataSizeInvalid, "model file %q is empty", cfg.path)
		}
		spec.blob = blob
	case acl.MdlLoadFromMem, acl.MdlLoadFromMemWithMem:
		if err := need(acl.MdlMemAddrPtr, acl.MdlMemSizet); err != nil {
			return 0, err
		}
		if spec.blob, err = c.modelBytes(cfg.mem, cfg.memSize); err != nil {
			return 0, err
		}
	default:
		return 0, c.fail(acl.CodeFeatureUnsupported, "load type %d (model queues) is not supported by the fallback", cfg.loadType)
	}
	if cfg.loadType == acl.MdlLoadFromFileWithMem || cfg.loadType == acl.MdlLoadFromMemWithMem {
		if err := need(acl.MdlWorkspaceAddrPtr, acl.MdlWorkspaceSizet, acl.MdlWeightAddrPtr, acl.MdlWeightSizet); err != nil {
			return 0, err
		}
		spec.withMem = true
		spec.work, spec.workSize, spec.weight, spec.weightSize = cfg.work, cfg.workSize, cfg.weight, cfg.weightSize
	}
	return c.load(spec)
}
