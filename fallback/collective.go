package fallback

import (
	"sync"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
)

// collKey names one registration: a group on a device.
type collKey struct {
	dev   int32
	group string
}

// collectiveTable maps (device, group) to the communicator a model's
// collective tasks on that device use. Safe for concurrent use.
type collectiveTable struct {
	mu sync.RWMutex
	m  map[collKey]ge.Collective
}

// registerCollective is npuhook.NPU.RegisterCollective.
func (n *NPU) registerCollective(device int32, group string, c ge.Collective) error {
	const op = "fallback.RegisterCollective"
	if device < 0 || int(device) >= len(n.devs) {
		return acl.Errorf(op, acl.CodeRTInvalidDeviceID, "device id %d is outside [0, %d)", device, len(n.devs))
	}
	if c == nil {
		return acl.Errorf(op, acl.CodeInvalidParam, "nil communicator for group %q on device %d", groupName(group), device)
	}
	k := collKey{device, groupName(group)}
	t := &n.colls
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[collKey]ge.Collective{}
	}
	if t.m[k] != nil {
		return acl.Errorf(op, acl.CodeInvalidParam, "group %q already has a communicator on device %d", k.group, device)
	}
	t.m[k] = c
	return nil
}

// unregisterCollective is npuhook.NPU.UnregisterCollective.
func (n *NPU) unregisterCollective(device int32, group string) error {
	k := collKey{device, groupName(group)}
	t := &n.colls
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m[k] == nil {
		return acl.Errorf("fallback.UnregisterCollective", acl.CodeInvalidParam, "group %q has no communicator on device %d", k.group, device)
	}
	delete(t.m, k)
	return nil
}

// collective returns the communicator of group on device, nil if none.
func (n *NPU) collective(device int32, group string) ge.Collective {
	t := &n.colls
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.m[collKey{device, group}]
}

func groupName(g string) string {
	if g == "" {
		return ge.DefaultGroup
	}
	return g
}

// kernelFor returns what runs task t of the model: its ge kernel, or, for
// a collective task, a launcher that finds the communicator of the task's
// group on the model's device and runs the collective through it. Every
// failure is an *acl.Error, so the stream (or Execute) reports it:
// ACL_ERROR_RT_MODEL_EXECUTE when no communicator is registered or the
// communicator fails (its own code when it returns an *acl.Error).
func (md *model) kernelFor(t *ge.Task) ge.Kernel {
	if !t.Op.IsCollective() {
		return ge.KernelFor(t.Op)
	}
	group := ge.CollectiveGroup(t)
	return func(t *ge.Task, args [][]byte) error {
		c := md.n.collective(md.dev.id, group)
		if c == nil {
			return acl.Errorf("model execution", acl.CodeRTModelExecute,
				"model %d task %q (%s): no communicator is registered for group %q on device %d", md.id, t.Name, t.Op, group, md.dev.id)
		}
		err := ge.RunCollective(t, args, c)
		if err == nil {
			return nil
		}
		code := acl.CodeRTModelExecute
		if e, ok := err.(*acl.Error); ok {
			code = e.Code
		}
		return acl.Errorf("model execution", code, "model %d task %q (%s) on group %q: %v", md.id, t.Name, t.Op, group, err)
	}
}
