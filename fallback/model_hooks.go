package fallback

import (
	"slices"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/internal/npuhook"
	"github.com/ascend-go/cann/internal/zcrt"
)

// modelLaunches is npuhook.NPU.ModelLaunches.
func (n *NPU) modelLaunches(id acl.ModelID) ([]npuhook.ModelLaunch, error) {
	md, err := n.hookModel("fallback.ModelLaunches", id)
	if err != nil {
		return nil, err
	}
	if md.executed.Load() == 0 {
		return nil, nil
	}
	md.launchMu.Lock()
	args := slices.Clone(md.launch)
	md.launchMu.Unlock()
	out := make([]npuhook.ModelLaunch, len(md.m.Tasks))
	for i := range out {
		t := &md.m.Tasks[i]
		lo, hi := md.rt.SlotStart(i), md.rt.SlotStart(i+1)
		l := npuhook.ModelLaunch{Task: i, Name: t.Name, Op: t.Op, Args: args[lo:hi:hi]}
		for a := range t.Args {
			l.Types = append(l.Types, md.rt.SlotType(i, a))
		}
		out[i] = l
	}
	return out, nil
}

// ModelStats is what a loaded model's executions did: how many ran, how
// many IO copies they made and how many task-argument slots they had to
// re-point at the caller's buffers (zero when the same buffers are bound
// again, the proof that a repeated execution costs no refresh).
type ModelStats struct {
	Executions   uint64 // executions run to the end
	IOCopies     uint64 // IO copies made (also counted in Counters by direction)
	Applies      uint64 // executions whose argument refresh was applied
	PatchedSlots uint64 // argument slots rewritten over all executions
	LastPatched  uint64 // argument slots rewritten by the last execution

	// A model with unknown dims (an ONNX model whose shapes a run fixes)
	// plans each input-shape tuple on first use in a bounded cache:
	Plans       int   // plans held now
	Compiles    int64 // plans built
	PlanHits    int64 // executions whose plan was cached
	Evictions   int64 // plans dropped to keep within the bound
	Interpreted int64 // executions of a plan whose shapes need values (staged: compiled stages between host steps, or node by node)
}

// ModelStats returns a loaded model's counters. Errors:
// ACL_ERROR_GE_EXEC_MODEL_ID_INVALID.
func (n *NPU) ModelStats(id acl.ModelID) (ModelStats, error) {
	if n == nil {
		return ModelStats{}, acl.NilHandle("ModelStats", "fallback NPU")
	}
	md, err := n.hookModel("fallback.ModelStats", id)
	if err != nil {
		return ModelStats{}, err
	}
	var s ModelStats
	md.dynStats(&s)
	for _, x := range md.parts() {
		if x.rt == nil {
			continue // a dynamic-batch model: its gears execute
		}
		st := x.rt.Stats()
		s.Executions += x.executed.Load()
		s.IOCopies += x.ioCopies.Load()
		s.Applies += st.Applies
		s.PatchedSlots += st.PatchedSlots
		s.LastPatched = max(s.LastPatched, st.LastPatched)
	}
	return s, nil
}

// modelRuntime is npuhook.NPU.ModelRuntime.
func (n *NPU) modelRuntime(id acl.ModelID) (*zcrt.Runtime, error) {
	md, err := n.hookModel("fallback.ModelRuntime", id)
	if err != nil {
		return nil, err
	}
	if md.rt == nil {
		return nil, acl.Errorf("fallback.ModelRuntime", acl.CodeFeatureUnsupported, "model %d has dynamic batch: each of its %d gears has its own runtime", id, len(md.gears))
	}
	return md.rt, nil
}

// loadedModels returns the ids of the loaded models, ascending.
func (n *NPU) loadedModels() []acl.ModelID {
	t := &n.models
	t.mu.RLock()
	defer t.mu.RUnlock()
	ids := make([]acl.ModelID, 0, len(t.models))
	for id := range t.models {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func (n *NPU) hookModel(op string, id acl.ModelID) (*model, error) {
	c := call{n: n, op: op, tid: -1, quiet: true}
	return c.lookupModel(id)
}
