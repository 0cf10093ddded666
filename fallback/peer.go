package fallback

import (
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/internal/npuhook"
	"github.com/ascend-go/cann/internal/osthread"
)

// Peer access between devices (aclrtDeviceCanAccessPeer,
// aclrtDeviceEnablePeerAccess, aclrtDeviceDisablePeerAccess; the ACL layer
// is hicann/runtime src/acl/aclrt_impl/memory.cpp:881-960). Every pair of
// distinct fallback devices can reach each other; a copy between memory
// of two devices needs peer access enabled between them first.

// DeviceCanAccessPeer is aclrtDeviceCanAccessPeer: 1 for two distinct
// devices of this NPU. The same device twice is ACL_ERROR_INVALID_PARAM
// (memory.cpp:886-896); an id out of range is ACL_ERROR_RT_INVALID_DEVICEID.
func (n *NPU) DeviceCanAccessPeer(deviceID, peerDeviceID int32) (int32, error) {
	c, err := n.begin("aclrtDeviceCanAccessPeer", false)
	if err != nil {
		return 0, err
	}
	defer n.exit()
	if deviceID == peerDeviceID {
		return 0, c.fail(acl.CodeInvalidParam, "deviceId %d cannot be equal to peerDeviceId %d", deviceID, peerDeviceID)
	}
	if _, err := c.device(peerDeviceID); err != nil {
		return 0, err
	}
	if _, err := c.device(deviceID); err != nil {
		return 0, err
	}
	return 1, nil
}

// DeviceEnablePeerAccess is aclrtDeviceEnablePeerAccess: the current
// context's device may copy to and from peerDeviceID's memory. flags is
// reserved: non-zero is ACL_ERROR_FEATURE_UNSUPPORTED (memory.cpp:910,
// ACL_CHECK_RESERVED_PARAM_REPORT_RET). Enabling twice is accepted.
func (n *NPU) DeviceEnablePeerAccess(peerDeviceID int32, flags uint32) error {
	c, err := n.peerCall("aclrtDeviceEnablePeerAccess", peerDeviceID, flags)
	if err != nil {
		return err
	}
	defer n.exit()
	d := c.ctx.dev
	n.mu.Lock()
	if d.peers == nil {
		d.peers = make(map[int32]bool)
	}
	d.peers[peerDeviceID] = true
	n.mu.Unlock()
	return nil
}

// DeviceDisablePeerAccess is aclrtDeviceDisablePeerAccess (memory.cpp:935-960).
func (n *NPU) DeviceDisablePeerAccess(peerDeviceID int32) error {
	c, err := n.peerCall("aclrtDeviceDisablePeerAccess", peerDeviceID, 0)
	if err != nil {
		return err
	}
	defer n.exit()
	n.mu.Lock()
	delete(c.ctx.dev.peers, peerDeviceID)
	n.mu.Unlock()
	return nil
}

// peerCall admits Enable/DisablePeerAccess: reserved flags, a current
// context (rtGetDevice), a peer other than the current device, in range.
// On success the caller must defer n.exit().
func (n *NPU) peerCall(op string, peer int32, flags uint32) (call, error) {
	c, err := n.begin(op, false)
	if err != nil {
		return c, err
	}
	fail := func(err error) (call, error) { n.exit(); return c, err }
	if flags != 0 {
		return fail(c.fail(acl.CodeFeatureUnsupported, "flags is reserved and must be 0, got %d", flags))
	}
	if c.tid < 0 {
		c.tid = osthread.ID()
	}
	if c.ctx = n.threads.current(c.tid); c.ctx == nil {
		return fail(c.fail(acl.CodeRTContextNull, "OS thread %d has no current context", c.tid))
	}
	if peer == c.ctx.dev.id {
		return fail(c.fail(acl.CodeInvalidParam, "deviceId %d cannot be equal to peerDeviceId %d", peer, peer))
	}
	if _, err := c.device(peer); err != nil {
		return fail(err)
	}
	return c, nil
}

// peered reports whether memory of devices a and b may meet in one copy:
// the same device, or peer access enabled between them in either direction.
func (n *NPU) peered(a, b int32) bool {
	if a == b || a < 0 || b < 0 {
		return true
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	return n.devs[a].peers[b] || n.devs[b].peers[a]
}

// checkPeers refuses a copy between memory of two devices without peer
// access. The code is not in the public source (the driver decides); the
// fallback reports ACL_ERROR_RT_PARAM_INVALID, what the runtime maps the
// driver's invalid-value to (errcode_manage.cc:38).
func (c *call) checkPeers(dst unsafe.Pointer, dl loc, src unsafe.Pointer, sl loc) error {
	if dl.Place != npuhook.PlaceDevice || sl.Place != npuhook.PlaceDevice || c.n.peered(dl.Device, sl.Device) {
		return nil
	}
	return c.fail(acl.CodeRTParamInvalid, "src 0x%x is on device %d and dst 0x%x on device %d, but peer access between them is not enabled: call aclrtDeviceEnablePeerAccess first",
		uintptr(src), sl.Device, uintptr(dst), dl.Device)
}
