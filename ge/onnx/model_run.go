package onnx

import (
	"context"
	"errors"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
)

// Run executes the model on one set of inputs (their descriptions give
// the run's shapes) and returns the outputs with their real shapes. The
// context bounds the run: a Loop that would not end stops with
// ErrCanceled when ctx ends. Errors are *Error values carrying an ACL
// code.
func (m *Model) Run(ctx context.Context, in []ge.HostTensor) ([]ge.HostTensor, error) {
	if m == nil {
		return nil, acl.NilHandle("onnx.Model.Run", "model")
	}
	return m.run(ctx, in, nil)
}

// RunInto is Run writing the outputs into out: out is resized to the
// model's outputs, and each tensor's dims and data are reused where they
// have room (reallocated where not). Passing back the previous run's
// result makes a steady-state run allocation-free; the caller owns out,
// so runs that share a Model need one out each.
func (m *Model) RunInto(ctx context.Context, in, out []ge.HostTensor) ([]ge.HostTensor, error) {
	if m == nil {
		return nil, acl.NilHandle("onnx.Model.RunInto", "model")
	}
	if cap(out) < len(m.outs) {
		out = append(out[:cap(out)], make([]ge.HostTensor, len(m.outs)-cap(out))...)
	}
	return m.run(ctx, in, out[:len(m.outs)])
}

// run is Run (out nil: fresh outputs) and RunInto (out sized to the
// outputs).
func (m *Model) run(ctx context.Context, in, out []ge.HostTensor) ([]ge.HostTensor, error) {
	if m.valueIO {
		return nil, modelError(ErrUnsupportedDataType, "the model has sequence or optional inputs or outputs: run it with RunValues")
	}
	p := m.cachedPlan(in)
	var descs []ge.TensorDesc
	if p == nil {
		descs = make([]ge.TensorDesc, len(in))
		for i, t := range in {
			descs[i] = t.Desc
		}
		if err := m.CheckShapes(descs); err != nil {
			return nil, err
		}
	}
	for i, t := range in {
		if int64(len(t.Data)) < t.Desc.Size() {
			return nil, m.shortInput(i, t)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, modelError(ErrCanceled, "run not started: %v", err)
	}
	if p == nil {
		var err error
		if p, err = m.plan(descs); err != nil {
			return nil, err
		}
	}
	if p.m != nil {
		return p.run(in, out)
	}
	m.mu.Lock()
	m.stats.Interpreted++
	m.mu.Unlock()
	if p.root != nil {
		rs, _ := p.states.Get().(*runState)
		if rs == nil {
			rs = newRunState()
		}
		rs.ctx = ctx
		env, last, err := rs.run(p.root, in)
		if err == nil {
			if out == nil {
				out = make([]ge.HostTensor, len(last.outs))
			}
			for i, s := range last.outs {
				copyInto(&out[i], env[s])
			}
		}
		rs.ctx = nil
		p.states.Put(rs)
		if !errors.Is(err, errFallback) {
			if err != nil {
				return nil, err
			}
			m.mu.Lock()
			m.stats.Staged++
			m.mu.Unlock()
			return out, nil
		}
	}
	vs := make([]Value, len(in))
	for i, t := range in {
		vs[i] = Value{Tensor: t}
	}
	res, err := m.interpret(ctx, vs)
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = make([]ge.HostTensor, len(res))
	}
	for i, v := range res {
		out[i] = v.Tensor
	}
	return out, nil
}

func (m *Model) shortInput(i int, t ge.HostTensor) error {
	return modelError(ErrShapeMismatch, "input %q holds %d bytes, %s needs %d", m.inputs[i].Name, len(t.Data), t.Desc, t.Desc.Size())
}

// stagedPlan is the plan of a shape tuple whose import needs values: its
// first stage built now, or none when the stages cannot express it (the
// interpreter then runs it whole).
func (m *Model) stagedPlan(key string, in []ge.TensorDesc) *plan {
	sl := make([]slotIn, len(in))
	for i, d := range in {
		sl[i] = slotIn{name: m.inputs[i].Name, dyn: true, h: ge.HostTensor{Desc: cloneDesc(d)}}
	}
	root, err := m.buildStage(m.mp.GetGraph(), 0, true, sl)
	if err != nil {
		root = nil
	}
	return &plan{key: key, root: root}
}

// planScratch is one compiled run's feature map and argument slices.
type planScratch struct {
	fm        []byte
	ins, outs [][]byte
	args      [][]byte
}

func (p *plan) weights() []byte {
	p.wOnce.Do(func() {
		p.w = aligned(make([]byte, p.m.WeightSize))
		copy(p.w, p.m.Weights)
		for i := range p.m.Tasks {
			p.kernels = append(p.kernels, ge.KernelFor(p.m.Tasks[i].Op))
		}
	})
	return p.w
}

// run executes a compiled plan on the host: inputs and outputs in place
// (zero copy), the feature map and argument slices from a pool. out nil:
// fresh outputs; else out (sized to the outputs) is reused.
func (p *plan) run(in, out []ge.HostTensor) ([]ge.HostTensor, error) {
	cm := p.m
	sc, _ := p.scratch.Get().(*planScratch)
	if sc == nil {
		sc = &planScratch{ins: make([][]byte, len(cm.Inputs)), outs: make([][]byte, len(cm.Outputs))}
	}
	defer p.scratch.Put(sc)
	if int64(len(sc.fm)) < cm.FeatureMapSize() {
		sc.fm = alignedBuf(cm.FeatureMapSize())
	}
	for i := range sc.ins {
		sc.ins[i] = aligned(in[i].Data)
	}
	if out == nil {
		out = make([]ge.HostTensor, len(cm.Outputs))
	}
	for i, d := range cm.Outputs {
		n := d.Size
		out[i].Desc.DataType, out[i].Desc.Format = d.DataType, acl.FormatND
		out[i].Desc.Dims = append(out[i].Desc.Dims[:0], d.Dims...)
		if int64(cap(out[i].Data)) < n || n > 0 && uintptrOf(out[i].Data[:1])%8 != 0 {
			out[i].Data = alignedBuf(n)
		}
		out[i].Data = out[i].Data[:n]
		sc.outs[i] = out[i].Data
	}
	w := p.weights()
	if err := runCompiled(cm, p.kernels, w, sc.ins, sc.outs, sc.fm, &sc.args); err != nil {
		return nil, err
	}
	return out, nil
}
