package fallback

import (
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/internal/npuhook"
)

// Memcpy is aclrtMemcpy: a synchronous copy. Both ranges are classified and
// checked, the kind must agree with where the pointers live
// (ACL_MEMCPY_DEFAULT infers it), and the copy is a plain copy().
func (n *NPU) Memcpy(dst unsafe.Pointer, destMax uintptr, src unsafe.Pointer, count uintptr, kind acl.MemcpyKind) error {
	c, err := n.begin("aclrtMemcpy", true)
	if err != nil {
		return err
	}
	defer n.exit()
	if err := c.copyArgs(dst, destMax, src, count, kind); err != nil || count == 0 {
		return err
	}
	dl, err := c.checkRange("dst", dst, count)
	if err != nil {
		return err
	}
	sl, err := c.checkRange("src", src, count)
	if err != nil {
		return err
	}
	dir, err := c.direction(kind, dst, dl, src, sl)
	if err != nil {
		return err
	}
	copy(unsafe.Slice((*byte)(dst), count), unsafe.Slice((*byte)(src), count))
	n.ctr.copied(dir, uint64(count))
	return nil
}

// MemcpyAsync is aclrtMemcpyAsync: the checks of Memcpy, plus host memory
// must be pinned or registered; the copy runs when the stream reaches it.
func (n *NPU) MemcpyAsync(dst unsafe.Pointer, destMax uintptr, src unsafe.Pointer, count uintptr, kind acl.MemcpyKind, sh acl.StreamHandle) error {
	c, err := n.begin("aclrtMemcpyAsync", true)
	if err != nil {
		return err
	}
	defer n.exit()
	if err := c.copyArgs(dst, destMax, src, count, kind); err != nil {
		return err
	}
	s, err := c.stream(sh)
	if err != nil || count == 0 {
		return err
	}
	dl, err := c.checkRange("dst", dst, count)
	if err != nil {
		return err
	}
	sl, err := c.checkRange("src", src, count)
	if err != nil {
		return err
	}
	if err := c.notPlain("dst", dst, dl); err != nil {
		return err
	}
	if err := c.notPlain("src", src, sl); err != nil {
		return err
	}
	dir, err := c.direction(kind, dst, dl, src, sl)
	if err != nil {
		return err
	}
	return c.enqueue(s, true, false, func(*stream) error {
		if err := dl.alive("dst"); err != nil {
			return err
		}
		if err := sl.alive("src"); err != nil {
			return err
		}
		copy(unsafe.Slice((*byte)(dst), count), unsafe.Slice((*byte)(src), count))
		n.ctr.copied(dir, uint64(count))
		return nil
	})
}

func (c *call) copyArgs(dst unsafe.Pointer, destMax uintptr, src unsafe.Pointer, count uintptr, kind acl.MemcpyKind) error {
	switch {
	case dst == nil:
		return c.fail(acl.CodeInvalidParam, "null dst")
	case src == nil:
		return c.fail(acl.CodeInvalidParam, "null src")
	case !kind.Valid():
		return c.fail(acl.CodeInvalidParam, "undefined copy kind %d", int32(kind))
	case destMax < count:
		return c.fail(acl.CodeInvalidParam, "count %d exceeds destMax %d", count, destMax)
	}
	return nil
}

// notPlain refuses plain host memory in asynchronous work: the device can
// only reach pinned or registered host memory.
func (c *call) notPlain(role string, p unsafe.Pointer, l loc) error {
	if l.Place == npuhook.PlaceHost {
		return c.fail(acl.CodeRTParamInvalid, "%s 0x%x is plain host memory; asynchronous work needs aclrtMallocHost or registered memory", role, uintptr(p))
	}
	return nil
}

func onDevice(l loc) bool {
	return l.Place == npuhook.PlaceDevice || l.Place == npuhook.PlaceRegistered
}
func onHost(l loc) bool { return l.Place != npuhook.PlaceDevice }

// direction checks kind against the placements and returns the direction
// counted for the copy. Registered host memory is both host memory and
// device-accessible, so it satisfies either side.
func (c *call) direction(kind acl.MemcpyKind, dst unsafe.Pointer, dl loc, src unsafe.Pointer, sl loc) (Direction, error) {
	ok := true
	var dir Direction
	switch kind {
	case acl.MemcpyHostToHost:
		ok, dir = onHost(sl) && onHost(dl), HostToHost
	case acl.MemcpyHostToDevice, acl.MemcpyHostToBufToDevice:
		ok, dir = onHost(sl) && onDevice(dl), HostToDevice
	case acl.MemcpyDeviceToHost:
		ok, dir = onDevice(sl) && onHost(dl), DeviceToHost
	case acl.MemcpyDeviceToDevice, acl.MemcpyInterDeviceToDevice:
		ok, dir = onDevice(sl) && onDevice(dl), DeviceToDevice
	case acl.MemcpyInnerDeviceToDevice:
		ok, dir = onDevice(sl) && onDevice(dl), DeviceToDevice
		if ok && sl.Place == npuhook.PlaceDevice && dl.Place == npuhook.PlaceDevice && sl.Device != dl.Device {
			return 0, c.fail(acl.CodeRTInvalidMemoryType, "%s copies within one device, but src 0x%x is on device %d and dst 0x%x on device %d",
				kind, uintptr(src), sl.Device, uintptr(dst), dl.Device)
		}
	default: // ACL_MEMCPY_DEFAULT: the placements decide
		dir = directionOf(sl.Place == npuhook.PlaceDevice, dl.Place == npuhook.PlaceDevice)
	}
	if !ok {
		return 0, c.fail(acl.CodeRTInvalidMemoryType, "%s does not match the memory: %s, %s",
			kind, describeLoc("src", uintptr(src), sl), describeLoc("dst", uintptr(dst), dl))
	}
	return dir, nil
}

// Memset is aclrtMemset: it sets count bytes of device memory (or
// registered host memory) to the low byte of value.
func (n *NPU) Memset(devPtr unsafe.Pointer, maxCount uintptr, value int32, count uintptr) error {
	c, err := n.begin("aclrtMemset", true)
	if err != nil {
		return err
	}
	defer n.exit()
	if err := c.setArgs(devPtr, maxCount, count); err != nil || count == 0 {
		return err
	}
	l, err := c.checkRange("devPtr", devPtr, count)
	if err != nil {
		return err
	}
	if !onDevice(l) {
		return c.fail(acl.CodeRTInvalidMemoryType, "aclrtMemset needs device memory, but %s", describeLoc("devPtr", uintptr(devPtr), l))
	}
	fill(unsafe.Slice((*byte)(devPtr), count), byte(value))
	n.ctr.memset(uint64(count))
	return nil
}

// MemsetAsync is aclrtMemsetAsync: Memset queued on a stream.
func (n *NPU) MemsetAsync(devPtr unsafe.Pointer, maxCount uintptr, value int32, count uintptr, sh acl.StreamHandle) error {
	c, err := n.begin("aclrtMemsetAsync", true)
	if err != nil {
		return err
	}
	defer n.exit()
	if err := c.setArgs(devPtr, maxCount, count); err != nil {
		return err
	}
	s, err := c.stream(sh)
	if err != nil || count == 0 {
		return err
	}
	l, err := c.checkRange("devPtr", devPtr, count)
	if err != nil {
		return err
	}
	if err := c.notPlain("devPtr", devPtr, l); err != nil {
		return err
	}
	if !onDevice(l) {
		return c.fail(acl.CodeRTInvalidMemoryType, "aclrtMemsetAsync needs device memory, but %s", describeLoc("devPtr", uintptr(devPtr), l))
	}
	return c.enqueue(s, true, false, func(*stream) error {
		if err := l.alive("devPtr"); err != nil {
			return err
		}
		fill(unsafe.Slice((*byte)(devPtr), count), byte(value))
		n.ctr.memset(uint64(count))
		return nil
	})
}

func (c *call) setArgs(p unsafe.Pointer, maxCount, count uintptr) error {
	switch {
	case p == nil:
		return c.fail(acl.CodeInvalidParam, "null devPtr")
	case maxCount < count:
		return c.fail(acl.CodeInvalidParam, "count %d exceeds maxCount %d", count, maxCount)
	}
	return nil
}

// fill sets every byte of b to v by doubling copies.
func fill(b []byte, v byte) {
	if v == 0 {
		clear(b)
		return
	}
	b[0] = v
	for i := 1; i < len(b); i *= 2 {
		copy(b[i:], b[:i])
	}
}
