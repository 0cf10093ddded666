package ge

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/ascend-go/cann/acl"
)

// BatchModelMagic opens a serialised BatchModel.
const BatchModelMagic = "ASCGEMBT"

// batchHeader is magic, version (uint32) and gear count (uint32).
const batchHeader = 16

// BatchModel is a model built with dynamic batch, as ATC builds one with
// --dynamic_batch_size "1,2,4,8": one compiled model per batch gear, all
// with the same inputs and outputs except the batch (dim 0 of every
// input). A runtime runs the gear whose batch was chosen, with buffers
// sized for the largest gear. Its description (Inputs, Outputs) is what
// the device reports for such a model: the inputs with -1 as their batch
// dim and the largest gear's sizes, then the extra input
// acl.DynamicTensorName (int32 [1], hicann/ge compiler/graph/passes/
// multi_batch/multi_batch_clone_pass.cc:470-480) that receives the batch;
// the outputs of the largest gear. A BatchModel is immutable once built.
type BatchModel struct {
	// Gears are the compiled models, by ascending batch.
	Gears []BatchGear
}

// BatchGear is one gear of a BatchModel.
type BatchGear struct {
	Batch int64
	Model *CompiledModel
}

// CompileBatch builds and compiles the graph of every gear: build returns
// the graph for one batch size. gears must be distinct, ≥ 1 and at most
// acl.MaxBatchNum of them (any order; the model keeps them ascending).
func CompileBatch(gears []int64, build func(batch int64) (*Graph, error), opts ...CompileOption) (*BatchModel, error) {
	const op = "ge.CompileBatch"
	sorted := slices.Sorted(slices.Values(gears))
	if err := checkGears(sorted); err != nil {
		return nil, acl.Errorf(op, acl.CodeInvalidParam, "%v", err)
	}
	bm := &BatchModel{}
	for _, b := range sorted {
		g, err := build(b)
		if err != nil {
			return nil, fmt.Errorf("%s: batch %d: %w", op, b, err)
		}
		m, err := Compile(g, opts...)
		if err != nil {
			return nil, fmt.Errorf("%s: batch %d: %w", op, b, err)
		}
		bm.Gears = append(bm.Gears, BatchGear{Batch: b, Model: m})
	}
	if err := bm.Validate(); err != nil {
		return nil, acl.Errorf(op, acl.CodeInvalidParam, "%v", err)
	}
	return bm, nil
}

func checkGears(sorted []int64) error {
	if len(sorted) == 0 || len(sorted) > acl.MaxBatchNum {
		return fmt.Errorf("%d batch gears: want 1 to %d", len(sorted), acl.MaxBatchNum)
	}
	for i, b := range sorted {
		if b < 1 || b > MaxDim {
			return fmt.Errorf("batch gear %d is outside [1, %d]", b, MaxDim)
		}
		if i > 0 && sorted[i-1] >= b {
			return fmt.Errorf("batch gears %v are not distinct and ascending", sorted)
		}
	}
	return nil
}

// Validate checks that the gears are ascending and agree: the same IO
// names, data types, formats and ranks; every input has the gear's batch
// as dim 0 and the same other dims; outputs agree except in dim 0; no IO
// is named acl.DynamicTensorName.
func (bm *BatchModel) Validate() error {
	if bm == nil {
		return acl.NilHandle("ge.BatchModel", "batch model")
	}
	batches := make([]int64, len(bm.Gears))
	for i, g := range bm.Gears {
		if g.Model == nil {
			return fmt.Errorf("gear %d has no model", i)
		}
		batches[i] = g.Batch
	}
	if err := checkGears(batches); err != nil {
		return err
	}
	first := bm.Gears[0].Model
	for _, g := range bm.Gears {
		m := g.Model
		if len(m.Inputs) != len(first.Inputs) || len(m.Outputs) != len(first.Outputs) {
			return fmt.Errorf("gear %d has %d inputs and %d outputs, gear %d has %d and %d",
				g.Batch, len(m.Inputs), len(m.Outputs), bm.Gears[0].Batch, len(first.Inputs), len(first.Outputs))
		}
		for dir, list := range [][]IODesc{m.Inputs, m.Outputs} {
			for i, d := range list {
				f := [][]IODesc{first.Inputs, first.Outputs}[dir][i]
				what := [...]string{"input", "output"}[dir]
				switch {
				case d.Name == acl.DynamicTensorName:
					return fmt.Errorf("%s %d is named %q, the name of the batch input", what, i, d.Name)
				case d.Name != f.Name || d.DataType != f.DataType || d.Format != f.Format || len(d.Dims) != len(f.Dims):
					return fmt.Errorf("gear %d %s %d (%q %s %s %s) differs from gear %d's (%q %s %s %s)", g.Batch, what, i,
						d.Name, d.DataType, d.Format, dimsString(d.Dims), bm.Gears[0].Batch, f.Name, f.DataType, f.Format, dimsString(f.Dims))
				case len(d.Dims) == 0:
					return fmt.Errorf("%s %q is a scalar: it has no batch dim", what, d.Name)
				case dir == 0 && d.Dims[0] != g.Batch:
					return fmt.Errorf("gear %d input %q has batch dim %d", g.Batch, d.Name, d.Dims[0])
				case !slices.Equal(d.Dims[1:], f.Dims[1:]):
					return fmt.Errorf("gear %d %s %q has dims %s, gear %d has %s: only the batch dim may differ",
						g.Batch, what, d.Name, dimsString(d.Dims), bm.Gears[0].Batch, dimsString(f.Dims))
				}
			}
		}
	}
	return nil
}

// Inputs describes the model's inputs as a device reports them: every
// gear input with batch dim -1 and the largest gear's size, then the
// batch input (acl.DynamicTensorName, int32 [1]).
func (bm *BatchModel) Inputs() []IODesc {
	if bm == nil || len(bm.Gears) == 0 || bm.Gears[len(bm.Gears)-1].Model == nil {
		return nil
	}
	last := bm.Gears[len(bm.Gears)-1].Model
	out := make([]IODesc, 0, len(last.Inputs)+1)
	for _, d := range last.Inputs {
		dims := slices.Clone(d.Dims)
		dims[0] = -1
		out = append(out, IODesc{Name: d.Name, DataType: d.DataType, Format: d.Format, Dims: dims, Size: d.Size})
	}
	return append(out, IODesc{Name: acl.DynamicTensorName, DataType: acl.Int32, Format: acl.FormatND, Dims: []int64{1}, Size: 4})
}

// Outputs describes the model's outputs: those of the largest gear.
func (bm *BatchModel) Outputs() []IODesc {
	if bm == nil || len(bm.Gears) == 0 || bm.Gears[len(bm.Gears)-1].Model == nil {
		return nil
	}
	last := bm.Gears[len(bm.Gears)-1].Model
	out := make([]IODesc, len(last.Outputs))
	for i, d := range last.Outputs {
		out[i] = IODesc{Name: d.Name, DataType: d.DataType, Format: d.Format, Dims: slices.Clone(d.Dims), Size: d.Size}
	}
	return out
}

// Batches lists the gears' batch sizes, ascending.
func (bm *BatchModel) Batches() []int64 {
	if bm == nil {
		return nil
	}
	out := make([]int64, len(bm.Gears))
	for i, g := range bm.Gears {
		out[i] = g.Batch
	}
	return out
}

// Gear returns the gear of batch b, or nil.
func (bm *BatchModel) Gear(b int64) *CompiledModel {
	if bm == nil {
		return nil
	}
	for _, g := range bm.Gears {
		if g.Batch == b {
			return g.Model
		}
	}
	return nil
}

// MarshalBinary serialises the model: BatchModelMagic, version 1 and the
// gear count (uint32 each, little-endian), then per gear its batch (int64)
// and the length (uint64) and bytes of its serialised CompiledModel.
func (bm *BatchModel) MarshalBinary() ([]byte, error) {
	const op = "ge.BatchModel.MarshalBinary"
	if err := bm.Validate(); err != nil {
		return nil, acl.Errorf(op, acl.CodeInvalidParam, "invalid model: %v", err)
	}
	out := make([]byte, batchHeader)
	copy(out, BatchModelMagic)
	binary.LittleEndian.PutUint32(out[8:], ModelVersion)
	binary.LittleEndian.PutUint32(out[12:], uint32(len(bm.Gears)))
	for _, g := range bm.Gears {
		b, err := g.Model.MarshalBinary()
		if err != nil {
			return nil, err
		}
		out = binary.LittleEndian.AppendUint64(out, uint64(g.Batch))
		out = binary.LittleEndian.AppendUint64(out, uint64(len(b)))
		out = append(out, b...)
	}
	return out, nil
}

// ParseBatchModel parses a serialised BatchModel with ParseModel's error
// codes: ACL_ERROR_INVALID_FILE_SIZE when truncated, ACL_ERROR_PARSE_MODEL
// for a wrong magic or version, ACL_ERROR_DESERIALIZE_MODEL for gears
// that do not agree (and a gear's own ParseModel code).
func ParseBatchModel(data []byte) (*BatchModel, error) {
	const op = "ge.ParseBatchModel"
	if len(data) < batchHeader {
		return nil, acl.Errorf(op, acl.CodeInvalidFileSize, "model is %d bytes, shorter than the %d-byte header", len(data), batchHeader)
	}
	if string(data[:8]) != BatchModelMagic {
		return nil, acl.Errorf(op, acl.CodeParseModel, "bad magic %q", data[:8])
	}
	if v := binary.LittleEndian.Uint32(data[8:]); v != ModelVersion {
		return nil, acl.Errorf(op, acl.CodeParseModel, "unsupported version %d (this reader handles %d)", v, ModelVersion)
	}
	n := binary.LittleEndian.Uint32(data[12:])
	if n == 0 || n > acl.MaxBatchNum {
		return nil, acl.Errorf(op, acl.CodeDeserializeModel, "%d batch gears: want 1 to %d", n, acl.MaxBatchNum)
	}
	rest := data[batchHeader:]
	bm := &BatchModel{}
	for i := range n {
		if len(rest) < 16 {
			return nil, acl.Errorf(op, acl.CodeInvalidFileSize, "gear %d: %d bytes left, its 16-byte header does not fit", i, len(rest))
		}
		b, size := int64(binary.LittleEndian.Uint64(rest)), binary.LittleEndian.Uint64(rest[8:])
		rest = rest[16:]
		if size > uint64(len(rest)) {
			return nil, acl.Errorf(op, acl.CodeInvalidFileSize, "gear %d declares %d bytes, %d left", i, size, len(rest))
		}
		m, err := ParseModel(rest[:size])
		if err != nil {
			return nil, fmt.Errorf("%s: gear %d (batch %d): %w", op, i, b, err)
		}
		rest = rest[size:]
		bm.Gears = append(bm.Gears, BatchGear{Batch: b, Model: m})
	}
	if len(rest) != 0 {
		return nil, acl.Errorf(op, acl.CodeInvalidFileSize, "%d bytes after the last gear", len(rest))
	}
	if err := bm.Validate(); err != nil {
		return nil, acl.Errorf(op, acl.CodeDeserializeModel, "%v", err)
	}
	return bm, nil
}
