package fallback

import "github.com/ascend-go/cann/acl"

// Host-side model objects (data buffers, datasets, descriptions, config
// handles) live in the maps of modelTable, keyed by handle. The helpers
// below hold the one way each is created, destroyed and read, so every kind
// answers a bad handle alike.

// hostCall admits a call on host-side model objects: like the C library,
// these need neither aclInit nor a context, only an open NPU. On success the
// caller must defer n.exit().
func (n *NPU) hostCall(op string) (call, error) {
	c := call{n: n, op: op, tid: -1}
	if !n.enter() {
		return c, c.closedErr()
	}
	return c, nil
}

// newHandle returns a fresh handle from the NPU's shared handle sequence,
// so a handle of one kind is never valid as another.
func (n *NPU) newHandle() uintptr {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.handle()
}

// createHostObject stores v under a fresh handle in *table, one of the
// maps of n.models (passed by address because the maps are made lazily,
// under the lock).
func createHostObject[H ~uintptr, V any](n *NPU, op string, table *map[H]*V, v *V) (H, error) {
	if _, err := n.hostCall(op); err != nil {
		return 0, err
	}
	defer n.exit()
	h := H(n.newHandle())
	t := &n.models
	t.mu.Lock()
	t.initLocked()
	(*table)[h] = v
	t.mu.Unlock()
	return h, nil
}

// changeHostObject runs f on the object h of *table with the model table
// locked for writing; a null or unknown h gives ACL_ERROR_INVALID_PARAM
// naming kind.
func changeHostObject[H ~uintptr, V any](n *NPU, op, kind string, table *map[H]*V, h H, f func(c *call, v *V) error) error {
	c, err := n.hostCall(op)
	if err != nil {
		return err
	}
	defer n.exit()
	t := &n.models
	t.mu.Lock()
	defer t.mu.Unlock()
	v := (*table)[h]
	if v == nil {
		return c.badHandle(kind, uintptr(h))
	}
	return f(&c, v)
}

// destroyHostObject removes handle h from *table, as changeHostObject.
func destroyHostObject[H ~uintptr, V any](n *NPU, op, kind string, table *map[H]*V, h H) error {
	return changeHostObject(n, op, kind, table, h, func(*call, *V) error {
		delete(*table, h)
		return nil
	})
}

// readHostObject returns f of the object h of *table, read under the
// table's lock, or the zero R when the NPU is closed or h is unknown: the
// getters whose C form answers a bad handle with 0 or NULL.
func readHostObject[H comparable, V, R any](n *NPU, table *map[H]*V, h H, f func(*V) R) (r R) {
	if !n.enter() {
		return r
	}
	defer n.exit()
	n.models.mu.RLock()
	defer n.models.mu.RUnlock()
	if v := (*table)[h]; v != nil {
		r = f(v)
	}
	return r
}

// badHandle reports a null or unknown model-API handle: the ACL layer
// checks its arguments, so ACL_ERROR_INVALID_PARAM.
func (c *call) badHandle(kind string, h uintptr) error {
	if h == 0 {
		return c.fail(acl.CodeInvalidParam, "null %s", kind)
	}
	return c.fail(acl.CodeInvalidParam, "%s 0x%x is unknown or destroyed", kind, h)
}
