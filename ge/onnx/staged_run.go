package onnx

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"slices"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	pb "github.com/ascend-go/cann/ge/onnx/internal/onnxpb"
)

// runState is what one staged run writes: every stage's environment and
// buffers, every control step's scratch. A plan pools them, so a run in
// steady state allocates nothing; concurrent runs each take their own.
type runState struct {
	ctx    context.Context
	stages map[*stage]*stageState
	ifs    map[*ifStep]*ifState
	loops  map[*loopStep]*loopState
}

// maxRunStates bounds the per-stage states one runState keeps (stages
// evicted from their caches would otherwise pile up).
const maxRunStates = 1024

func newRunState() *runState {
	return &runState{stages: map[*stage]*stageState{}, ifs: map[*ifStep]*ifState{}, loops: map[*loopStep]*loopState{}}
}

type stageState struct {
	env    []ge.HostTensor
	fm     []byte
	segIn  [][]byte
	segOut [][]byte
	args   [][]byte
	next   []ge.HostTensor
}

func (rs *runState) stateOf(st *stage) *stageState {
	if ss, ok := rs.stages[st]; ok {
		return ss
	}
	if len(rs.stages) >= maxRunStates {
		clear(rs.stages)
	}
	ss := &stageState{env: make([]ge.HostTensor, st.envN), next: make([]ge.HostTensor, len(st.liveOut))}
	for _, c := range st.consts {
		ss.env[c.slot] = c.h
	}
	if sg := st.seg; sg != nil {
		ss.fm = alignedBuf(sg.cm.FeatureMapSize())
		ss.segIn = make([][]byte, len(sg.in))
		ss.segOut = make([][]byte, len(sg.out))
		for i, s := range sg.out {
			ss.segOut[i] = alignedBuf(sg.cm.Outputs[i].Size)
			ss.env[s] = ge.HostTensor{Desc: st.descs[s], Data: ss.segOut[i]}
		}
	}
	rs.stages[st] = ss
	return ss
}

// run runs st and its continuations on the live-ins in and returns the
// last stage's environment and the stage (whose outs index it).
func (rs *runState) run(st *stage, in []ge.HostTensor) ([]ge.HostTensor, *stage, error) {
	for {
		if err := rs.ctx.Err(); err != nil {
			return nil, nil, modelError(ErrCanceled, "run ended: %v", err)
		}
		ss := rs.stateOf(st)
		for k := range st.nIn {
			if st.dyn[k] {
				ss.env[k] = in[k]
			}
		}
		if sg := st.seg; sg != nil {
			for i, s := range sg.in {
				ss.segIn[i] = aligned(ss.env[s].Data)
			}
			if err := runCompiled(sg.cm, sg.kernels, sg.w, ss.segIn, ss.segOut, ss.fm, &ss.args); err != nil {
				return nil, nil, errFallback
			}
		}
		if st.ctrl == nil {
			return ss.env, st, nil
		}
		if err := st.ctrl.run(rs, ss.env); err != nil {
			return nil, nil, err
		}
		for i, s := range st.liveOut {
			ss.next[i] = ss.env[s]
		}
		cur := st
		nx, err := st.next.get(ss.next, st.liveDyn, func() (*stage, error) { return cur.continuation(ss.next) })
		if err != nil {
			return nil, nil, err
		}
		st, in = nx, ss.next
	}
}

// runCompiled runs a compiled model on the host: inputs and outputs in
// place where they are zero-copy, copied through the feature map where
// not; args is scratch for the tasks' arguments. kernels, when given, are
// the tasks' kernels, called without RunTask's per-call validation (which
// infers every task's shapes again): only for a model ge.Compile built in
// this process, whose tasks and slots are consistent by construction, as
// a runtime validates a loaded model once and then runs its kernels.
func runCompiled(cm *ge.CompiledModel, kernels []ge.Kernel, w []byte, inputs, outputs [][]byte, fm []byte, args *[][]byte) error {
	for i, d := range cm.Inputs {
		if !d.ZeroCopy {
			copy(fm[d.BasicOffset:d.BasicOffset+d.Size], inputs[i])
		}
	}
	a := *args
	for ti := range cm.Tasks {
		t := &cm.Tasks[ti]
		if cap(a) < len(t.Args) {
			a = make([][]byte, len(t.Args))
		}
		a = a[:len(t.Args)]
		for i, x := range t.Args {
			switch {
			case x.Mem == ge.MemFixed:
				a[i] = w[x.Offset : x.Offset+x.Size]
			case x.Mem == ge.MemModelIO:
				user, basic := inputs, int64(0)
				if x.IO.Dir == ge.IOOutput {
					user, basic = outputs, cm.Outputs[x.IO.Index].BasicOffset
				} else {
					basic = cm.Inputs[x.IO.Index].BasicOffset
				}
				rel := x.Offset - basic
				a[i] = user[x.IO.Index][rel : rel+x.Size]
			default:
				a[i] = fm[x.Offset : x.Offset+x.Size]
			}
		}
		var err error
		if kernels != nil && kernels[ti] != nil {
			err = kernels[ti](t, a)
		} else {
			err = ge.RunTask(t, a)
		}
		if err != nil {
			*args = a
			return asError(err)
		}
	}
	*args = a
	for i, d := range cm.Outputs {
		if !d.ZeroCopy {
			copy(outputs[i], fm[d.BasicOffset:d.BasicOffset+d.Size])
		}
	}
	return nil
}

// alignedBuf returns n bytes on an 8-byte boundary.
func alignedBuf(n int64) []byte {
	if n <= 0 {
		return []byte{}
	}
	return bytesOf(make([]uint64, (n+7)/8))[:n]
}

// copyInto makes dst a copy of src, reusing dst's dims and data when they
// have room.
func copyInto(dst *ge.HostTensor, src ge.HostTensor) {
	n := src.Desc.Size()
	dst.Desc.DataType, dst.Desc.Format = src.Desc.DataType, acl.FormatND
	dst.Desc.Dims = append(dst.Desc.Dims[:0], src.Desc.Dims...)
	if int64(cap(dst.Data)) < n || n > 0 && uintptrOf(dst.Data[:1])%8 != 0 {
		dst.Data = alignedBuf(n)
	}
	dst.Data = dst.Data[:n]
	copy(dst.Data, src.Data[:n])
}

// truth reads a one-element condition.
func truth(h ge.HostTensor) (bool, bool) {
	if h.Desc.NumElements() != 1 || int64(len(h.Data)) < h.Desc.Size() {
		return false, false
	}
	switch h.Desc.DataType {
	case acl.Bool, acl.Uint8, acl.Int8:
		return h.Data[0] != 0, true
	case acl.Int32:
		return binary.LittleEndian.Uint32(h.Data) != 0, true
	case acl.Int64:
		return binary.LittleEndian.Uint64(h.Data) != 0, true
	case acl.Float32:
		return math.Float32frombits(binary.LittleEndian.Uint32(h.Data)) != 0, true
	case acl.Float64:
		return math.Float64frombits(binary.LittleEndian.Uint64(h.Data)) != 0, true
	}
	return false, false
}

// sub is a subgraph (If's branch, Loop's body) run as stages: its
// live-ins are its formal inputs (all dynamic) and then the outer values
// it reads (free), constant or not as they are in the enclosing stage.
type sub struct {
	m      *Model
	gp     *pb.GraphProto
	formal []string
	names  []string // of the free values
	free   []int    // their slots in the enclosing environment
	dyn    []bool   // per live-in (formals first)
	consts []ge.HostTensor
	cache  stageCache
}

func (s *sub) init(m *Model, st *stage, gp *pb.GraphProto, formal []string, names []string, free []int, freeDyn []bool) {
	s.m, s.gp, s.formal, s.names, s.free = m, gp, formal, names, free
	s.dyn = make([]bool, len(formal), len(formal)+len(free))
	for i := range s.dyn {
		s.dyn[i] = true
	}
	s.dyn = append(s.dyn, freeDyn...)
	s.consts = make([]ge.HostTensor, len(s.dyn))
	for k, f := range free {
		if !freeDyn[k] {
			s.consts[len(formal)+k] = constVal(st, f)
		}
	}
}

// run runs the subgraph on in (formals then free values) and returns its
// environment and last stage.
func (s *sub) run(rs *runState, in []ge.HostTensor) ([]ge.HostTensor, *stage, error) {
	st, err := s.cache.get(in, s.dyn, func() (*stage, error) {
		sl := make([]slotIn, len(in))
		for i := range in {
			name := ""
			if i < len(s.formal) {
				name = s.formal[i]
			} else {
				name = s.names[i-len(s.formal)]
			}
			sl[i] = slotIn{name: name, dyn: s.dyn[i], h: s.consts[i]}
			if s.dyn[i] {
				sl[i].h = ge.HostTensor{Desc: cloneDesc(in[i].Desc)}
			}
		}
		return s.m.buildStage(s.gp, 0, false, sl)
	})
	if err != nil {
		return nil, nil, err
	}
	return rs.run(st, in)
}

// ifStep runs the branch an If's condition selects.
type ifStep struct {
	cond int
	br   [2]sub
	outs []int
}

type ifState struct{ in []ge.HostTensor }

func (s *ifStep) run(rs *runState, env []ge.HostTensor) error {
	b, ok := truth(env[s.cond])
	if !ok {
		return errFallback
	}
	br := &s.br[1]
	if b {
		br = &s.br[0]
	}
	is := rs.ifs[s]
	if is == nil {
		if len(rs.ifs) >= maxRunStates {
			clear(rs.ifs)
		}
		is = &ifState{in: make([]ge.HostTensor, max(len(s.br[0].free), len(s.br[1].free)))}
		rs.ifs[s] = is
	}
	in := is.in[:len(br.free)]
	for i, f := range br.free {
		in[i] = env[f]
	}
	benv, last, err := br.run(rs, in)
	if err != nil {
		return err
	}
	if len(last.outs) != len(s.outs) {
		return errFallback
	}
	for i, o := range s.outs {
		if o >= 0 {
			env[o] = benv[last.outs[i]]
		}
	}
	return nil
}

// loopStep runs a Loop's body while its trip count and condition allow,
// carrying values in two sets of buffers (one read, one written) and
// stacking the scan outputs in buffers kept from run to run.
type loopStep struct {
	m          *Model
	trip, cond int // slots, -1 when absent
	carried    []int
	nScan      int
	body       sub
	outs       []int
}

type loopState struct {
	iter, cond ge.HostTensor
	carry      [2][]ge.HostTensor
	scan       [][]byte
	scanDesc   []ge.TensorDesc
	outDims    [][]int64
	in         []ge.HostTensor
}

func (s *loopStep) state(rs *runState) *loopState {
	if ls := rs.loops[s]; ls != nil {
		return ls
	}
	if len(rs.loops) >= maxRunStates {
		clear(rs.loops)
	}
	nc := len(s.carried)
	ls := &loopState{
		iter:     ge.HostTensor{Desc: ge.TensorDesc{DataType: acl.Int64, Format: acl.FormatND}, Data: alignedBuf(8)},
		cond:     ge.HostTensor{Desc: ge.TensorDesc{DataType: acl.Bool, Format: acl.FormatND}, Data: alignedBuf(1)},
		carry:    [2][]ge.HostTensor{make([]ge.HostTensor, nc), make([]ge.HostTensor, nc)},
		scan:     make([][]byte, s.nScan),
		scanDesc: make([]ge.TensorDesc, s.nScan),
		outDims:  make([][]int64, s.nScan),
		in:       make([]ge.HostTensor, 2+nc+len(s.body.free)),
	}
	rs.loops[s] = ls
	return ls
}

func (s *loopStep) run(rs *runState, env []ge.HostTensor) error {
	trip := int64(-1)
	if s.trip >= 0 {
		t := env[s.trip]
		if t.Desc.NumElements() != 1 || int64(len(t.Data)) < t.Desc.Size() {
			return errFallback
		}
		switch t.Desc.DataType {
		case acl.Int64:
			trip = int64(binary.LittleEndian.Uint64(t.Data))
		case acl.Int32:
			trip = int64(int32(binary.LittleEndian.Uint32(t.Data)))
		default:
			return errFallback
		}
		trip = max(trip, 0)
	}
	cond := true
	if s.cond >= 0 {
		b, ok := truth(env[s.cond])
		if !ok {
			return errFallback
		}
		cond = b
	}
	ls := s.state(rs)
	nc := len(s.carried)
	for k, c := range s.carried {
		copyInto(&ls.carry[0][k], env[c])
	}
	cur := 0
	var n, scanBytes int64
	limit := s.m.memLimit()
	for i := int64(0); cond && (trip < 0 || i < trip); i++ {
		if err := rs.ctx.Err(); err != nil {
			return modelError(ErrCanceled, "Loop ended after %d iterations: %v", i, err)
		}
		binary.LittleEndian.PutUint64(ls.iter.Data, uint64(i))
		ls.cond.Data[0] = 1
		ls.in[0], ls.in[1] = ls.iter, ls.cond
		copy(ls.in[2:], ls.carry[cur])
		for k, f := range s.body.free {
			ls.in[2+nc+k] = env[f]
		}
		benv, last, err := s.body.run(rs, ls.in)
		if err != nil {
			return err
		}
		if len(last.outs) != 1+nc+s.nScan {
			return errFallback
		}
		b, ok := truth(benv[last.outs[0]])
		if !ok {
			return errFallback
		}
		cond = b
		for k := range nc {
			v := benv[last.outs[1+k]]
			if v.Desc.DataType != ls.carry[cur][k].Desc.DataType || v.Desc.Size() > limit {
				return errFallback
			}
			copyInto(&ls.carry[1-cur][k], v)
		}
		cur = 1 - cur
		for k := range s.nScan {
			v := benv[last.outs[1+nc+k]]
			if i == 0 {
				ls.scanDesc[k] = ge.TensorDesc{DataType: v.Desc.DataType, Format: acl.FormatND, Dims: append(ls.scanDesc[k].Dims[:0], v.Desc.Dims...)}
				ls.scan[k] = ls.scan[k][:0]
			} else if v.Desc.DataType != ls.scanDesc[k].DataType || !slices.Equal(v.Desc.Dims, ls.scanDesc[k].Dims) {
				return errFallback
			}
			sz := v.Desc.Size()
			if scanBytes += sz; scanBytes > limit {
				return modelError(ErrOutOfMemory, "Loop scan outputs exceed %d bytes after %d iterations", limit, i+1)
			}
			ls.scan[k] = appendAligned(ls.scan[k], v.Data[:sz])
		}
		n++
	}
	if s.nScan > 0 && n == 0 {
		return errFallback // no iteration: an empty scan output
	}
	for k, o := range s.outs {
		if o < 0 {
			continue
		}
		if k < nc {
			env[o] = ls.carry[cur][k]
			continue
		}
		d := &ls.scanDesc[k-nc]
		env[o] = ge.HostTensor{Desc: ge.TensorDesc{DataType: d.DataType, Format: acl.FormatND}, Data: ls.scan[k-nc]}
		env[o].Desc.Dims = ls.scanDims(k-nc, n)
	}
	return nil
}

// scanDims is [n, per-iteration dims...] in a buffer of the state.
func (ls *loopState) scanDims(k int, n int64) []int64 {
	ls.outDims[k] = append(append(ls.outDims[k][:0], n), ls.scanDesc[k].Dims...)
	return ls.outDims[k]
}

// appendAligned appends b to buf, moving to an 8-byte-aligned buffer of
// twice the size when it is full.
func appendAligned(buf, b []byte) []byte {
	if len(buf)+len(b) > cap(buf) {
		nb := alignedBuf(int64(max(2*cap(buf), len(buf)+len(b))))[:len(buf)]
		copy(nb, buf)
		buf = nb
	}
	return append(buf, b...)
}

// evalStep folds one node whose import needs values: its inputs are the
// run's values, as the interpreter would have them.
type evalStep struct {
	m        *Model
	n        *pb.NodeProto
	idx      int
	names    []string
	ins      []int
	outNames []string
	outs     []int
}

func (s *evalStep) run(rs *runState, env []ge.HostTensor) error {
	im := newImporter(s.m.mp, s.m.opset, s.m.cfg)
	im.eval, im.foldLimit, im.ctx = true, s.m.memLimit(), rs.ctx
	for k, name := range s.names {
		h := env[s.ins[k]]
		c := ge.HostTensor{Desc: cloneDesc(h.Desc), Data: aligned(append([]byte(nil), h.Data[:h.Desc.Size()]...))}
		im.sc.set(name, &value{desc: c.Desc, c: &c})
	}
	if err := im.node(s.idx, s.n); err != nil {
		if errors.Is(err, ErrCanceled) || errors.Is(err, ErrOutOfMemory) {
			return err
		}
		return errFallback
	}
	for j, o := range s.outNames {
		if o == "" || s.outs[j] < 0 {
			continue
		}
		v := im.sc.get(o)
		if v == nil || v.kind != KindTensor || v.c == nil {
			return errFallback
		}
		env[s.outs[j]] = *v.c
	}
	return nil
}
