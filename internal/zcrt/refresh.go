package zcrt

import (
	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
)

// IOBind is how one caller buffer is bound for one execution.
type IOBind struct {
	UserBuffer
	// Target is the address the IO's slots hold during the execution
	// (plus their relative offsets): the caller's buffer for zero copy,
	// the model's own block when the data is copied.
	Target uintptr
	// Extent is how many bytes from Target the tasks may touch: the larger
	// of the buffer and the tensor for zero copy (a buffer up to
	// SizeSlack bytes short relies on the device's allocation padding;
	// the backend checks those bytes exist), the tensor size otherwise.
	Extent uintptr
	// Copy is set when data moves between the buffer and Target: before
	// the tasks for an input, after them for an output. It is clear when
	// the buffer is the model's block itself (source equals destination).
	Copy bool
	// CopyLen is the byte count of the copy: min(buffer, tensor) for an
	// input, the tensor size for an output.
	CopyLen uintptr
	// Reason is why the IO is copied (NotCopyOnly for a host buffer bound
	// to a zero-copy IO, or for no copy at all).
	Reason CopyReason
}

// Exec is one execution request checked by Prepare. Its slices are reused
// across calls, so a caller that keeps one Exec per model executes without
// allocating.
type Exec struct {
	In, Out []IOBind
}

// Copies returns the number of IO copies the execution makes.
func (e *Exec) Copies() int {
	n := 0
	for _, l := range [][]IOBind{e.In, e.Out} {
		for i := range l {
			if l[i].Copy {
				n++
			}
		}
	}
	return n
}

// Prepare checks the caller's buffers and decides how each IO is bound,
// filling e. The checks and their order follow GE's UpdateAllNodeArgs:
// the IO count (E13025, ACL_ERROR_GE_FAILURE), the
// outputReuseInputMemIndexes pairs, then per IO a non-null address
// (ACL_ERROR_GE_EXEC_MODEL_ADDR_INVALID), the size rule user + 64 < model
// (E13025, ACL_ERROR_GE_FAILURE naming the IO and both sizes), host
// buffers refused when the workspace excludes IO memory, and a copied
// output no smaller than its tensor. Prepare reads the Runtime only, so it
// is safe while an earlier execution runs.
func (r *Runtime) Prepare(op string, in, out []UserBuffer, e *Exec) error {
	if err := CheckIOCount(op, r.m, len(in), len(out)); err != nil {
		return err
	}
	if err := checkReusePairs(op, r.pairs, in, out); err != nil {
		return err
	}
	e.In = grow(e.In, len(in))
	e.Out = grow(e.Out, len(out))
	for i := range in {
		if err := r.bind(op, &r.in[i], in[i], &e.In[i]); err != nil {
			return err
		}
	}
	for i := range out {
		if err := r.bind(op, &r.out[i], out[i], &e.Out[i]); err != nil {
			return err
		}
	}
	return nil
}

func grow(s []IOBind, n int) []IOBind {
	if cap(s) < n {
		return make([]IOBind, n)
	}
	return s[:n]
}

func (r *Runtime) bind(op string, rec *IORecord, u UserBuffer, b *IOBind) error {
	if u.Size == 0 && rec.Ref.Dir == ge.IOInput && !rec.ZeroCopy() {
		// A copy-only input of zero bytes: GE copies min(user, model) bytes
		// and skips zero lengths (runtime/v1/graph/load/model_manager/
		// davinci_model.cc CopyInputForNoZeroCopy), so nothing is checked or
		// copied and the tasks read the model's own block.
		*b = IOBind{UserBuffer: u, Reason: rec.CopyOnly, Target: r.ModelAddr(rec), Extent: uintptr(rec.Size)}
		return nil
	}
	if err := checkSize(op, rec, u.Size); err != nil {
		return err
	}
	if u.Addr == 0 {
		return acl.Errorf(op, acl.CodeGEExecModelAddrInvalid, "%s: the data buffer address is null", rec.label())
	}
	if u.Place == PlaceHost && r.noIO != "" && rec.Basic >= r.m.FeatureMapSize() {
		if r.cfg.ExcludeIO {
			return checkHostInReuseMode(op, rec)
		}
		// GE would copy into the model's own IO block, past the end of
		// the caller's work memory: refuse instead of writing there.
		return acl.Errorf(op, acl.CodeGEParamInvalid,
			"%s is in host memory and must be copied into the model's own block, but %s; bind a device buffer", rec.label(), r.noIO)
	}
	model := uintptr(rec.Size)
	*b = IOBind{UserBuffer: u, Reason: rec.CopyOnly}
	if rec.ZeroCopy() && u.Place == PlaceDevice {
		b.Target, b.Extent = u.Addr, max(u.Size, model)
		return nil
	}
	// Copied: the tasks use the model's own block.
	b.Target, b.Extent = r.ModelAddr(rec), model
	if rec.Ref.Dir == ge.IOInput {
		b.CopyLen = min(u.Size, model)
	} else {
		if u.Size < model {
			// CopyOutputData fails (hicann/ge davinci_model.cc:5054) and
			// the execute returns ACL_ERROR_GE_INTERNAL_ERROR (7911).
			return acl.Errorf(op, acl.CodeGEInternalError,
				"%s: the buffer of %d bytes is smaller than the %d bytes copied out to it (%s)", rec.label(), u.Size, model, copyWhy(rec, u))
		}
		b.CopyLen = model
	}
	b.Copy = u.Addr != b.Target && b.CopyLen > 0
	return nil
}

func copyWhy(rec *IORecord, u UserBuffer) string {
	if rec.ZeroCopy() {
		return "host buffer"
	}
	return rec.CopyOnly.String()
}

// Apply writes the execution's targets into the argument memory: for each
// IO whose target differs from the address its slots hold, every slot of
// that IO is rewritten (target + relative offset); unchanged IOs cost
// nothing. It returns the number of slots rewritten. e must come from a
// successful Prepare of this Runtime; Apply must not run concurrently with
// another Apply of the same Runtime.
func (r *Runtime) Apply(e *Exec) int {
	n := r.apply(r.in, e.In) + r.apply(r.out, e.Out)
	r.applies.Add(1)
	r.patched.Add(uint64(n))
	r.lastPatched.Store(uint64(n))
	return n
}

func (r *Runtime) apply(recs []IORecord, binds []IOBind) int {
	n := 0
	for i := range min(len(recs), len(binds)) {
		rec := &recs[i]
		t := uint64(binds[i].Target)
		if t == rec.current {
			continue
		}
		for _, s := range rec.Slots {
			r.args[s.Index] = t + uint64(s.Rel)
		}
		n += len(rec.Slots)
		rec.current = t
	}
	return n
}
