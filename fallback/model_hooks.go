package fallback

import (
	"slices"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/zerocopy"
)

// ModelLaunch is one kernel launch of a model's last execution, as the
// device saw it: the task and the addresses in its argument slots.
type ModelLaunch struct {
	Task  int
	Name  string
	Op    ge.OpType
	Args  []uint64            // one address per 8-byte slot
	Types []zerocopy.AddrType // each slot's address type
}

// ModelLaunches returns the launches of the last execution of a loaded
// model, in task order (empty before the first execution). Tests use it to
// prove zero copy: a slot bound to a caller's device buffer holds the
// buffer's address. Errors: ACL_ERROR_GE_EXEC_MODEL_ID_INVALID.
func (n *NPU) ModelLaunches(id acl.ModelID) ([]ModelLaunch, error) {
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
	out := make([]ModelLaunch, len(md.m.Tasks))
	for i := range out {
		t := &md.m.Tasks[i]
		lo, hi := md.rt.SlotStart(i), md.rt.SlotStart(i+1)
		l := ModelLaunch{Task: i, Name: t.Name, Op: t.Op, Args: args[lo:hi:hi]}
		for a := range t.Args {
			l.Types = append(l.Types, md.rt.SlotType(i, a))
		}
		out[i] = l
	}
	return out, nil
}

// ModelStats is what a loaded model's executions did.
type ModelStats struct {
	Executions uint64 // executions run to the end
	IOCopies   uint64 // IO copies made (also counted in Counters by direction)
	zerocopy.Stats
}

// ModelStats returns a loaded model's counters. Errors:
// ACL_ERROR_GE_EXEC_MODEL_ID_INVALID.
func (n *NPU) ModelStats(id acl.ModelID) (ModelStats, error) {
	md, err := n.hookModel("fallback.ModelStats", id)
	if err != nil {
		return ModelStats{}, err
	}
	return ModelStats{Executions: md.executed.Load(), IOCopies: md.ioCopies.Load(), Stats: md.rt.Stats()}, nil
}

// ModelRuntime returns the zero-copy runtime of a loaded model (its offset
// records and argument memory), for tests and tools. Read it only while no
// execution of the model runs.
func (n *NPU) ModelRuntime(id acl.ModelID) (*zerocopy.Runtime, error) {
	md, err := n.hookModel("fallback.ModelRuntime", id)
	if err != nil {
		return nil, err
	}
	return md.rt, nil
}

// LoadedModels returns the ids of the loaded models, ascending.
func (n *NPU) LoadedModels() []acl.ModelID {
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
