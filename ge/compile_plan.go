package ge

import (
	"slices"
	"sort"
	"strconv"

	"github.com/ascend-go/cann/acl"
)

// rootUse collects how the tasks use one root value.
type rootUse struct {
	def, last int
	noZC      bool // some task cannot take an external address for it
}

// plan builds the memory plan: model inputs and outputs, weights, feature-map
// tensors and workspaces, their lifetimes and offsets.
func (c *compiler) plan() error {
	n := len(c.tasks)
	use := map[*cval]*rootUse{}
	get := func(r *cval) *rootUse {
		u := use[r]
		if u == nil {
			u = &rootUse{def: -1, last: -1}
			use[r] = u
		}
		return u
	}
	for _, t := range c.tasks {
		for i, v := range t.inputs {
			u := get(v.root)
			u.last = max(u.last, t.step)
			u.noZC = u.noZC || t.inNoZC[i]
		}
		for i, v := range t.outs {
			u := get(v.root)
			u.def = t.step
			u.last = max(u.last, t.step)
			u.noZC = u.noZC || t.outNoZC[i]
		}
	}
	for _, v := range c.vals {
		v.buf = -1
	}
	add := func(r *cval, b Buffer) {
		r.buf = len(c.plan_)
		c.plan_ = append(c.plan_, b)
	}
	for i, d := range c.data {
		r := d.outs[0]
		u := get(r)
		b := Buffer{Name: r.name(), Kind: BufInput, IO: IORef{IOInput, i}, Size: r.desc.Size(), Mem: MemModelIO, Def: 0, Last: n - 1}
		if u.noZC || d.outNoZC[0] { // a consumer, or the Data itself, cannot refresh
			b.Mem, b.Last = MemFeatureMap, max(u.last, 0)
		}
		add(r, b)
	}
	for j, v := range c.outs {
		r := v.root
		u := get(r)
		b := Buffer{Name: r.name(), Kind: BufOutput, IO: IORef{IOOutput, j}, Size: r.desc.Size(), Mem: MemModelIO, Def: 0, Last: n - 1}
		if u.noZC {
			b.Mem, b.Def = MemFeatureMap, u.def
		}
		add(r, b)
	}
	for _, cn := range c.nodes {
		if cn.op != OpConst {
			continue
		}
		r := cn.outs[0]
		if use[r] == nil {
			continue // no task reads it
		}
		b := Buffer{Name: r.name(), Kind: BufWeight, Mem: MemFixed, Offset: c.weight, Size: r.desc.Size(), Def: 0, Last: n - 1}
		c.weight += alignUp(b.Size)
		add(r, b)
	}
	wsBase := map[*cnode]int{}
	for _, t := range c.tasks {
		for _, v := range t.outs {
			if v.buf >= 0 {
				continue
			}
			u := use[v]
			add(v, Buffer{Name: v.name(), Kind: BufFeature, Mem: MemFeatureMap, Size: v.desc.Size(), Def: u.def, Last: u.last})
		}
		ws := workspaceOf(t.op, descsOf(t.inputs), descsOf(t.outs), t.attrs)
		wsBase[t] = len(c.plan_)
		for i, sz := range ws {
			c.plan_ = append(c.plan_, Buffer{Name: t.name + ":ws" + strconv.Itoa(i), Kind: BufWorkspace, Mem: MemFeatureMap, Size: sz, Def: t.step, Last: t.step})
		}
	}
	c.wsBase = wsBase

	// Feature map: every buffer in MemFeatureMap, placed by lifetime.
	var fmIdx []int
	var spans []span
	for i, b := range c.plan_ {
		if b.Mem == MemFeatureMap {
			fmIdx = append(fmIdx, i)
			spans = append(spans, span{size: alignUp(b.Size), def: b.Def, last: b.Last})
		}
	}
	fm := alignUp(assignOffsets(spans, !c.cfg.noReuse))
	for k, i := range fmIdx {
		c.plan_[i].Offset = spans[k].off
	}
	// IO region: outputs in order, then inputs ascending by size so that
	// input copies can merge into one transfer.
	cur := fm
	for j := range c.outs {
		b := &c.plan_[c.outs[j].root.buf]
		if b.Mem == MemModelIO {
			b.Offset = cur
			cur += alignUp(b.Size)
		}
	}
	var ins []*Buffer
	for _, d := range c.data {
		if b := &c.plan_[d.outs[0].buf]; b.Mem == MemModelIO {
			ins = append(ins, b)
		}
	}
	sort.SliceStable(ins, func(i, j int) bool { return ins[i].Size < ins[j].Size })
	for _, b := range ins {
		b.Offset = cur
		cur += alignUp(b.Size)
	}
	c.memory, c.zcSize = cur, cur-fm
	if c.memory > MaxMemorySize || c.weight > MaxMemorySize {
		return acl.Errorf("ge.Compile", acl.CodeGEParamInvalid, "graph %q needs %d bytes of memory and %d of weights, over the %d limit", c.g.name, c.memory, c.weight, int64(MaxMemorySize))
	}
	return nil
}

func descsOf(vs []*cval) []TensorDesc {
	d := make([]TensorDesc, len(vs))
	for i, v := range vs {
		d[i] = cloneDesc(v.desc)
	}
	return d
}

// emit builds the CompiledModel from the plan.
func (c *compiler) emit() *CompiledModel {
	m := &CompiledModel{Name: c.g.name, MemorySize: c.memory, ZeroCopySize: c.zcSize, WeightSize: c.weight,
		Plan: c.plan_, Attrs: map[string]string{}}
	m.Weights = make([]byte, c.weight)
	for _, cn := range c.nodes {
		if cn.op == OpConst && cn.outs[0].buf >= 0 {
			copy(m.Weights[c.plan_[cn.outs[0].buf].Offset:], cn.src.value)
		}
	}
	slot := func(v *cval, noZC bool) ArgSlot {
		b := c.plan_[v.root.buf]
		s := ArgSlot{Mem: b.Mem, Offset: b.Offset, Size: v.desc.Size(), Buffer: v.root.buf, NoZeroCopy: noZC}
		if b.Mem == MemModelIO {
			s.IO = b.IO
		}
		return s
	}
	for _, t := range c.tasks {
		task := Task{Op: t.op, Name: t.name, Attrs: t.attrs.Clone(), Inputs: descsOf(t.inputs), Outputs: descsOf(t.outs)}
		if task.Attrs == nil {
			task.Attrs = Attrs{}
		}
		for i, v := range t.inputs {
			task.Args = append(task.Args, slot(v, t.inNoZC[i]))
		}
		for i, v := range t.outs {
			task.Args = append(task.Args, slot(v, t.outNoZC[i]))
		}
		task.Workspace = workspaceOf(t.op, task.Inputs, task.Outputs, task.Attrs)
		for i, sz := range task.Workspace {
			bi := c.wsBase[t] + i
			task.Args = append(task.Args, ArgSlot{Mem: MemFeatureMap, Offset: c.plan_[bi].Offset, Size: sz, Buffer: bi})
		}
		m.Tasks = append(m.Tasks, task)
	}
	io := func(v *cval, name string) IODesc {
		b := c.plan_[v.root.buf]
		return IODesc{Name: name, DataType: v.desc.DataType, Format: v.desc.Format, Dims: cloneDims(v.desc.Dims),
			Size: v.desc.Size(), ZeroCopy: b.Mem == MemModelIO, BasicOffset: b.Offset, Buffer: v.root.buf}
	}
	for _, d := range c.data {
		m.Inputs = append(m.Inputs, io(d.outs[0], d.name))
	}
	for j, v := range c.outs {
		m.Outputs = append(m.Outputs, io(v, c.outNames[j]))
	}
	for _, list := range [][]IODesc{m.Inputs, m.Outputs} {
		for i := range list {
			list[i].RelativeOffsets = relativeOffsets(m, &list[i])
		}
	}
	return m
}

// relativeOffsets lists the distinct offsets, from the IO's basic offset,
// at which task slots address the IO.
func relativeOffsets(m *CompiledModel, d *IODesc) []int64 {
	var rel []int64
	for _, t := range m.Tasks {
		for _, a := range t.Args {
			if a.Buffer == d.Buffer && !slices.Contains(rel, a.Offset-d.BasicOffset) {
				rel = append(rel, a.Offset-d.BasicOffset)
			}
		}
	}
	slices.Sort(rel)
	return rel
}
