package acl

import "errors"

// Dynamic shapes as the device has them. ATC keeps unknown dims (-1) when
// asked (--input_shape="x:-1,3,-1,-1", or a range with
// --input_shape_range), or builds gears (--dynamic_batch_size,
// --dynamic_image_size, --dynamic_dims). At run time the model API carries
// the shapes: the real shape of each input of a run is a tensor
// description set on the input dataset (aclmdlSetDatasetTensorDesc), and
// after the run each output's real shape is one on the output dataset
// (aclmdlGetDatasetTensorDesc). hicann/ge api/acl/acl_model/model/model.cpp
// reads the former into the run's input shapes (SetInputData, model.cpp:
// 522-562) and writes the latter from its output tensors (model.cpp:
// 672-693, 818-843).

// Limits of aclmdlIODimsRange and aclmdlHW (acl_mdl.h).
const (
	DimEndpoints = 2   // ACL_DIM_ENDPOINTS
	MaxHWNum     = 128 // ACL_MAX_HW_NUM
)

// IODimsRange is aclmdlIODimsRange: 2056 bytes, rangeCount at offset 0,
// range[128][2] at 8.
type IODimsRange struct {
	RangeCount uintptr
	Range      [MaxDimCount][DimEndpoints]int64
}

// Ranges returns the first RangeCount ranges (at most MaxDimCount).
func (r *IODimsRange) Ranges() [][2]int64 {
	if r == nil {
		return nil
	}
	return append([][2]int64(nil), r.Range[:min(r.RangeCount, MaxDimCount)]...)
}

// HW is aclmdlHW: 2056 bytes, hwCount at offset 0, hw[128][2] at 8.
type HW struct {
	HWCount uintptr
	HW      [MaxHWNum][2]uint64
}

// Gears returns the first HWCount (height, width) gears.
func (h *HW) Gears() [][2]uint64 {
	if h == nil {
		return nil
	}
	return append([][2]uint64(nil), h.HW[:min(h.HWCount, MaxHWNum)]...)
}

// TensorDesc is the content of an aclTensorDesc as the model API uses it:
// the real shape of one input of a run, or of one output after it.
type TensorDesc struct {
	DataType DataType
	Format   Format
	Dims     []int64
}

// Elements returns the number of elements (1 for a scalar); -1 when a dim
// is unknown.
func (t TensorDesc) Elements() int64 {
	n := int64(1)
	for _, d := range t.Dims {
		if d < 0 {
			return -1
		}
		n *= d
	}
	return n
}

// Bytes returns the bytes the tensor takes; -1 when a dim is unknown.
func (t TensorDesc) Bytes() int64 {
	n := t.Elements()
	if n < 0 {
		return -1
	}
	return (n*int64(t.DataType.Bits()) + 7) / 8
}

// Dynamic reports whether the IO has an unknown dim (-1) or rank (-2):
// each run of such an input needs its real shape (Dataset.SetTensorDesc).
func (io IODesc) Dynamic() bool {
	for _, d := range io.Dims {
		if d < 0 {
			return true
		}
	}
	return false
}

// InputDimsRange returns the range of each dim of input i
// (aclmdlGetInputDimsRange): [n, n] for a fixed dim, [lo, hi] for an
// unknown or ranged one, hi -1 for no upper bound; nil for a model with
// gears or a backend without the query. A bad i is
// ACL_ERROR_INVALID_PARAM.
func (d ModelDesc) InputDimsRange(i int) ([][2]int64, error) {
	const op = "ModelDesc.InputDimsRange"
	if i < 0 || i >= len(d.Inputs) {
		return nil, Errorf(op, CodeInvalidParam, "input %d: the model has %d inputs", i, len(d.Inputs))
	}
	return append([][2]int64(nil), d.Inputs[i].Range...), nil
}

// readDynamic reads what the description of a dynamic model adds: each
// input's dims range and the image-size gears. A backend without the
// queries (ErrNotSupported) leaves them empty. The context is current.
func readDynamic(mb ModelBackend, h ModelDescHandle, desc *ModelDesc) error {
	var r IODimsRange
	for i := range desc.Inputs {
		switch err := mb.GetInputDimsRange(h, uintptr(i), &r); {
		case errors.Is(err, ErrNotSupported):
			return nil
		case err != nil:
			return err
		case r.RangeCount > 0:
			desc.Inputs[i].Range = r.Ranges()
		}
	}
	var hw HW
	switch err := mb.GetDynamicHW(h, ^uintptr(0), &hw); {
	case errors.Is(err, ErrNotSupported):
	case err != nil:
		return err
	case hw.HWCount > 0:
		desc.HW = hw.Gears()
	}
	return nil
}

// SetTensorDesc sets the real shape of entry i for the next runs with the
// dataset (aclmdlSetDatasetTensorDesc; the backend copies the
// description). An input of a model with unknown dims needs one for every
// run; a nil t removes it. GE reads it when the execution is called, so it
// may be changed as soon as Execute or ExecuteAsync has returned.
func (ds *Dataset) SetTensorDesc(i int, t *TensorDesc) error {
	const op = "Dataset.SetTensorDesc"
	if ds == nil {
		return nilError(op)
	}
	if i < 0 {
		return Errorf(op, CodeInvalidParam, "index %d is negative", i)
	}
	ds.cmu.Lock()
	defer ds.cmu.Unlock()
	h, err := acquire(op, ds.r())
	if err != nil {
		return err
	}
	defer h.release()
	return ds.dev.call(op, func() error {
		if t == nil {
			return ds.mb.SetDatasetTensorDesc(ds.h, 0, uintptr(i))
		}
		d, err := ds.mb.CreateTensorDesc(t.DataType, t.Dims, t.Format)
		if err != nil {
			return err
		}
		return errors.Join(ds.mb.SetDatasetTensorDesc(ds.h, d, uintptr(i)), ds.mb.DestroyTensorDesc(d))
	})
}

// TensorDesc returns the description of entry i (aclmdlGetDatasetTensorDesc):
// after an execution, the real shape of output i; nil when the entry has
// none (a static model's run, or i out of range). For ExecuteAsync, read
// it once the stream has passed the execution.
func (ds *Dataset) TensorDesc(i int) (*TensorDesc, error) {
	const op = "Dataset.TensorDesc"
	if ds == nil {
		return nil, nilError(op)
	}
	if i < 0 {
		return nil, nil
	}
	ds.cmu.RLock()
	defer ds.cmu.RUnlock()
	h, err := acquire(op, ds.r())
	if err != nil {
		return nil, err
	}
	defer h.release()
	var out *TensorDesc
	err = ds.dev.call(op, func() error {
		var err error
		out, err = readTensorDesc(ds.mb, ds.mb.GetDatasetTensorDesc(ds.h, uintptr(i)))
		return err
	})
	return out, err
}

// UnknownRank is ACL_UNKNOWN_RANK (acl_base_mdl.h): what
// aclGetTensorDescNumDims reports for a description of unknown rank (dims
// [-2]).
const UnknownRank = ^uintptr(1)

// readTensorDesc reads a backend description; nil for NULL. A description
// of unknown rank reads as dims [-2].
func readTensorDesc(mb ModelBackend, d TensorDescHandle) (*TensorDesc, error) {
	if d == 0 {
		return nil, nil
	}
	n := mb.GetTensorDescNumDims(d)
	if n == UnknownRank {
		return &TensorDesc{DataType: mb.GetTensorDescType(d), Format: mb.GetTensorDescFormat(d), Dims: []int64{-2}}, nil
	}
	if n > MaxDimCount {
		return nil, Errorf("aclGetTensorDescNumDims", CodeInvalidParam, "the description reports %d dims", n)
	}
	t := &TensorDesc{DataType: mb.GetTensorDescType(d), Format: mb.GetTensorDescFormat(d), Dims: make([]int64, n)}
	for k := range n {
		v, err := mb.GetTensorDescDimV2(d, k)
		if err != nil {
			return nil, err
		}
		t.Dims[k] = v
	}
	return t, nil
}

// copyTensorDescs copies the descriptions of entries [0, n) from one
// backend dataset to another (a staged run's: model_stage.go). The context
// is current.
func copyTensorDescs(mb ModelBackend, from, to DatasetHandle, n int) error {
	for i := range n {
		if err := mb.SetDatasetTensorDesc(to, mb.GetDatasetTensorDesc(from, uintptr(i)), uintptr(i)); err != nil {
			return err
		}
	}
	return nil
}

// SetDynamicHW chooses the image size of the next executions with in, a
// model built with --dynamic_image_size (aclmdlSetDynamicHWSize): it writes
// height and width into in's buffer for the DynamicTensorName input. A
// size that is not one of Desc().HW is
// ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID; a model without the input is
// ACL_ERROR_INVALID_PARAM.
func (m *Model) SetDynamicHW(in *Dataset, height, width uint64) error {
	const op = "Model.SetDynamicHW"
	return m.setGear(op, in, func(idx uintptr) error { return m.mb.SetDynamicHWSize(m.id, in.h, idx, height, width) })
}

// SetInputDynamicDims chooses the dynamic-dims gear of the next executions
// with in, a model built with --dynamic_dims (aclmdlSetInputDynamicDims):
// dims are all inputs' dims concatenated (Desc order, the extra input
// left out), the gear's values in place of the -1 dims. Values that are
// not a gear are ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID; a dim count other
// than the inputs' total ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID.
func (m *Model) SetInputDynamicDims(in *Dataset, dims []int64) error {
	const op = "Model.SetInputDynamicDims"
	if len(dims) == 0 || len(dims) > MaxDimCount {
		return Errorf(op, CodeInvalidParam, "%d dims: give 1 to %d", len(dims), MaxDimCount)
	}
	var d IODims
	copy(d.Name[:MaxTensorNameLen-1], DynamicTensorName)
	d.DimCount = uintptr(copy(d.Dims[:], dims))
	return m.setGear(op, in, func(idx uintptr) error { return m.mb.SetInputDynamicDims(m.id, in.h, idx, &d) })
}

// setGear runs a gear choice that writes into in's DynamicTensorName
// buffer, as SetDynamicBatchSize does.
func (m *Model) setGear(op string, in *Dataset, set func(idx uintptr) error) error {
	if m == nil || in == nil {
		return nilError(op)
	}
	idx, err := m.InputIndex(DynamicTensorName)
	if err != nil {
		return Errorf(op, CodeInvalidParam, "the model has no input %q: it was not built with gears", DynamicTensorName)
	}
	return m.exec(op, nil, in, in, false, false, func() error {
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.dev.bound(func() error {
			if err := m.waitLast(); err != nil {
				return err
			}
			return set(uintptr(idx))
		})
	})
}

// dynamic reports whether the model has an IO of unknown shape, whose
// runs carry descriptions: staged runs of it are synchronous, so that the
// output descriptions can be copied back.
func (d ModelDesc) dynamic() bool {
	for _, ios := range [][]IODesc{d.Inputs, d.Outputs} {
		for _, io := range ios {
			if io.Dynamic() {
				return true
			}
		}
	}
	return false
}
