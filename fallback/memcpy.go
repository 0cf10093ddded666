package fallback

import (
	"context"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/internal/npuhook"
	"github.com/ascend-go/cann/internal/osthread"
)

// Copies and memsets follow the ACL layer (hicann/runtime
// src/acl/aclrt_impl/memory.cpp) and the runtime's argument checks
// (src/runtime/api/impl/api_error.cc); the line numbers below are of
// hicann/runtime @681ef76.

// Memcpy is aclrtMemcpy: a synchronous copy. A count of 0 succeeds before
// any other check (memory.cpp:653-656). Both ranges must lie in live memory
// (or plain host memory); the kind is checked only for being one the ACL
// layer translates (memory.cpp:162-199) — the runtime copies by where the
// pointers live and does not compare the kind with them
// (api_error.cc:2129-2152). WithPedantic reports a kind that disagrees.
func (n *NPU) Memcpy(dst unsafe.Pointer, destMax uintptr, src unsafe.Pointer, count uintptr, kind acl.MemcpyKind) error {
	c, err := n.begin("aclrtMemcpy", false)
	if err != nil {
		return err
	}
	defer n.exit()
	if count == 0 {
		return nil
	}
	if err := c.needCtx(); err != nil {
		return err
	}
	if err := c.copyArgs(dst, destMax, src, count, kind); err != nil {
		return err
	}
	dl, sl, err := c.copyRanges(dst, src, count)
	if err != nil {
		return err
	}
	dir, ok := kindDirection(kind, dl, sl)
	if !ok {
		if n.cfg.pedantic {
			return c.pedantic(c.kindMismatch(kind, dst, dl, src, sl), "the device ignores the kind of a synchronous copy and would have copied by where the pointers live")
		}
		dir = directionOf(sl.Place == npuhook.PlaceDevice, dl.Place == npuhook.PlaceDevice)
	}
	copy(unsafe.Slice((*byte)(dst), count), unsafe.Slice((*byte)(src), count))
	n.ctr.copied(dir, uint64(count))
	return nil
}

// MemcpyAsync is aclrtMemcpyAsync. A count of 0 succeeds at once
// (memory.cpp:688-691). The kind is corrected from where the pointers live
// as the runtime does (api_error.cc:2694-2786); a copy that ends up host to
// host is ACL_ERROR_RT_FEATURE_NOT_SUPPORT (api_error.cc:2246-2248). A copy
// touching plain (pageable) host memory becomes an implicit synchronize of
// the stream plus a synchronous copy (api_error.cc:2256-2269); WithPedantic
// reports it, and a kind the runtime had to correct, instead.
func (n *NPU) MemcpyAsync(dst unsafe.Pointer, destMax uintptr, src unsafe.Pointer, count uintptr, kind acl.MemcpyKind, sh acl.StreamHandle) error {
	c, err := n.begin("aclrtMemcpyAsync", false)
	if err != nil {
		return err
	}
	defer n.exit()
	if count == 0 {
		return nil
	}
	if err := c.needCtx(); err != nil {
		return err
	}
	if err := c.copyArgs(dst, destMax, src, count, kind); err != nil {
		return err
	}
	s, err := c.stream(sh)
	if err != nil {
		return err
	}
	dl, sl, err := c.copyRanges(dst, src, count)
	if err != nil {
		return err
	}
	var dir Direction
	if kind == acl.MemcpyHostToBufToDevice {
		// RT_MEMCPY_HOST_TO_DEVICE_EX is checked by a path the public
		// source leaves to the driver (api_error.cc:2228-2235); the
		// fallback keeps the placement check.
		var ok bool
		if dir, ok = kindDirection(kind, dl, sl); !ok {
			return c.kindMismatch(kind, dst, dl, src, sl)
		}
	} else {
		got, err := c.correctKind(kind, dst, dl, src, sl)
		if err != nil {
			return err
		}
		if got == acl.MemcpyHostToHost {
			return c.fail(acl.CodeRTFeatureNotSupport, "an asynchronous copy between two host buffers (%s, %s) is not supported; use aclrtMemcpy",
				describeLoc("src", uintptr(src), sl), describeLoc("dst", uintptr(dst), dl))
		}
		if n.cfg.pedantic && kind != acl.MemcpyDefault && got != kind {
			return c.pedantic(c.kindMismatch(kind, dst, dl, src, sl), "the device would have corrected the kind to "+got.String())
		}
		dir = directionOf(got == acl.MemcpyDeviceToHost || got == acl.MemcpyDeviceToDevice, got == acl.MemcpyHostToDevice || got == acl.MemcpyDeviceToDevice)
	}
	if sl.Place == npuhook.PlaceHost || dl.Place == npuhook.PlaceHost {
		if n.cfg.pedantic {
			return c.pedantic(c.fail(acl.CodeRTParamInvalid, "%s, %s", describeLoc("src", uintptr(src), sl), describeLoc("dst", uintptr(dst), dl)),
				"the device would have synchronized the stream and copied synchronously, as pageable memory cannot be read asynchronously; use aclrtMallocHost or registered memory")
		}
		if err := c.syncStream(context.Background(), sh, -1); err != nil {
			return err
		}
		copy(unsafe.Slice((*byte)(dst), count), unsafe.Slice((*byte)(src), count))
		n.ctr.copied(dir, uint64(count))
		return nil
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

// tidOf returns tid, or the calling OS thread's id when tid is unset (< 0).
func tidOf(tid int) int {
	if tid < 0 {
		return osthread.ID()
	}
	return tid
}

// needCtx resolves the calling thread's current context for a call that
// began without one (the count-0 shortcut comes first).
func (c *call) needCtx() error {
	c.tid = tidOf(c.tid)
	if c.ctx = c.n.threads.current(c.tid); c.ctx == nil {
		return c.fail(acl.CodeRTContextNull, "OS thread %d has no current context: call aclrtSetDevice or aclrtSetCurrentContext on this thread first (a goroutine must hold runtime.LockOSThread to keep its thread)", c.tid)
	}
	return nil
}

// copyArgs checks the arguments of a copy of count > 0 bytes: NULL
// pointers and kinds the ACL layer does not translate (INNER and INTER
// DEVICE_TO_DEVICE among them) are ACL_ERROR_INVALID_PARAM
// (memory.cpp:658-664, 162-199); count > destMax is the runtime's
// ACL_ERROR_RT_PARAM_INVALID (api_error.cc:2138, 2184).
func (c *call) copyArgs(dst unsafe.Pointer, destMax uintptr, src unsafe.Pointer, count uintptr, kind acl.MemcpyKind) error {
	switch {
	case dst == nil:
		return c.fail(acl.CodeInvalidParam, "null dst")
	case src == nil:
		return c.fail(acl.CodeInvalidParam, "null src")
	case kind < acl.MemcpyHostToHost || kind > acl.MemcpyHostToBufToDevice:
		return c.fail(acl.CodeInvalidParam, "copy kind %s is not one of HOST_TO_HOST, HOST_TO_DEVICE, DEVICE_TO_HOST, DEVICE_TO_DEVICE, DEFAULT, HOST_TO_BUF_TO_DEVICE", kind)
	case destMax < count:
		return c.fail(acl.CodeRTParamInvalid, "count %d is outside (0, %d]: it exceeds destMax", count, destMax)
	}
	return nil
}

// copyRanges classifies and checks both ranges of a copy, and that memory
// of two devices meets only with peer access enabled.
func (c *call) copyRanges(dst, src unsafe.Pointer, count uintptr) (dl, sl loc, err error) {
	if dl, err = c.checkRange("dst", dst, count); err != nil {
		return
	}
	if sl, err = c.checkRange("src", src, count); err != nil {
		return
	}
	err = c.checkPeers(dst, dl, src, sl)
	return
}

// pedantic marks err (an *acl.Error from c.fail) as the pedantic option's
// report of something the device tolerates, saying what it would do.
func (c *call) pedantic(err error, device string) error {
	if e, ok := err.(*acl.Error); ok {
		e.Msg = "pedantic: " + e.Msg + "; " + device
		c.n.threads.setMsg(tidOf(c.tid), e.Msg)
	}
	return err
}

func onDevice(l loc) bool {
	return l.Place == npuhook.PlaceDevice || l.Place == npuhook.PlaceRegistered
}
func onHost(l loc) bool { return l.Place != npuhook.PlaceDevice }

// memLoc is the runtime's location type of a pointer (rtMemLocationType):
// device memory, host memory the runtime knows (aclrtMallocHost or
// registered; "registered memory should be treated as host memory",
// api_error.cc:2866), or unregistered (pageable) host memory.
type memLoc uint8

const (
	locDevice memLoc = iota
	locHost
	locUnregistered
)

func memLocOf(l loc) memLoc {
	switch l.Place {
	case npuhook.PlaceDevice:
		return locDevice
	case npuhook.PlaceHost:
		return locUnregistered
	}
	return locHost
}

// correctKind is MemcpyKindAutoCorrect (api_error.cc:2694-2786): between
// device and known host memory the kind is forced by the locations; with
// pageable memory on a side a set of kinds is allowed (DEFAULT takes the
// first), any other is ACL_ERROR_RT_PARAM_INVALID.
func (c *call) correctKind(kind acl.MemcpyKind, dst unsafe.Pointer, dl loc, src unsafe.Pointer, sl loc) (acl.MemcpyKind, error) {
	const (
		h2h = acl.MemcpyHostToHost
		h2d = acl.MemcpyHostToDevice
		d2h = acl.MemcpyDeviceToHost
		d2d = acl.MemcpyDeviceToDevice
	)
	sLoc, dLoc := memLocOf(sl), memLocOf(dl)
	var allowed []acl.MemcpyKind // allowed[0] is what DEFAULT becomes
	switch {
	case sLoc != locUnregistered && dLoc != locUnregistered:
		return directionKind(sLoc == locDevice, dLoc == locDevice), nil
	case sLoc == locUnregistered && dLoc == locDevice:
		allowed = []acl.MemcpyKind{h2d, d2d}
	case sLoc == locDevice && dLoc == locUnregistered:
		allowed = []acl.MemcpyKind{d2h, d2d}
	case sLoc == locHost: // to unregistered
		allowed = []acl.MemcpyKind{h2h, h2d}
	case dLoc == locHost: // from unregistered
		allowed = []acl.MemcpyKind{h2h, d2h}
	default: // unregistered to unregistered
		allowed = []acl.MemcpyKind{h2h, h2d, d2h, d2d}
	}
	if kind == acl.MemcpyDefault {
		return allowed[0], nil
	}
	for _, k := range allowed {
		if k == kind {
			return k, nil
		}
	}
	return 0, c.fail(acl.CodeRTParamInvalid, "%s is not allowed for %s, %s; expected one of %v",
		kind, describeLoc("src", uintptr(src), sl), describeLoc("dst", uintptr(dst), dl), allowed)
}

func directionKind(srcDev, dstDev bool) acl.MemcpyKind {
	switch {
	case srcDev && dstDev:
		return acl.MemcpyDeviceToDevice
	case srcDev:
		return acl.MemcpyDeviceToHost
	case dstDev:
		return acl.MemcpyHostToDevice
	}
	return acl.MemcpyHostToHost
}

// kindDirection checks kind against the placements and returns the
// direction counted for the copy. Registered host memory is both host
// memory and device-accessible, so it satisfies either side.
func kindDirection(kind acl.MemcpyKind, dl, sl loc) (Direction, bool) {
	switch kind {
	case acl.MemcpyHostToHost:
		return HostToHost, onHost(sl) && onHost(dl)
	case acl.MemcpyHostToDevice, acl.MemcpyHostToBufToDevice:
		return HostToDevice, onHost(sl) && onDevice(dl)
	case acl.MemcpyDeviceToHost:
		return DeviceToHost, onDevice(sl) && onHost(dl)
	case acl.MemcpyDeviceToDevice:
		return DeviceToDevice, onDevice(sl) && onDevice(dl)
	}
	// ACL_MEMCPY_DEFAULT: the placements decide
	return directionOf(sl.Place == npuhook.PlaceDevice, dl.Place == npuhook.PlaceDevice), true
}

// kindMismatch is the error of a kind that disagrees with the memory
// (WithPedantic, and HOST_TO_BUF_TO_DEVICE, whose check the public source
// leaves to the driver).
func (c *call) kindMismatch(kind acl.MemcpyKind, dst unsafe.Pointer, dl loc, src unsafe.Pointer, sl loc) error {
	return c.fail(acl.CodeRTInvalidMemoryType, "%s does not match the memory: %s, %s",
		kind, describeLoc("src", uintptr(src), sl), describeLoc("dst", uintptr(dst), dl))
}

// Memset is aclrtMemset: it sets count bytes of device memory, pinned
// (aclrtMallocHost) or registered host memory to the low byte of value. A
// count of 0 succeeds before the NULL check (memory.cpp:674-678). Plain
// host memory is refused with ACL_ERROR_RT_INVALID_MEMORY_TYPE: the
// documentation supports aclrtMallocHost memory only and the public source
// does not settle the code.
func (n *NPU) Memset(devPtr unsafe.Pointer, maxCount uintptr, value int32, count uintptr) error {
	c, err := n.begin("aclrtMemset", false)
	if err != nil {
		return err
	}
	defer n.exit()
	if count == 0 {
		return nil
	}
	if err := c.needCtx(); err != nil {
		return err
	}
	if _, err := c.setArgs(devPtr, maxCount, count); err != nil {
		return err
	}
	fill(unsafe.Slice((*byte)(devPtr), count), byte(value))
	n.ctr.memset(uint64(count))
	return nil
}

// MemsetAsync is aclrtMemsetAsync: Memset queued on a stream (count 0:
// memory.cpp:742-745).
func (n *NPU) MemsetAsync(devPtr unsafe.Pointer, maxCount uintptr, value int32, count uintptr, sh acl.StreamHandle) error {
	c, err := n.begin("aclrtMemsetAsync", false)
	if err != nil {
		return err
	}
	defer n.exit()
	if count == 0 {
		return nil
	}
	if err := c.needCtx(); err != nil {
		return err
	}
	if devPtr == nil {
		return c.fail(acl.CodeInvalidParam, "null devPtr")
	}
	s, err := c.stream(sh)
	if err != nil {
		return err
	}
	l, err := c.setArgs(devPtr, maxCount, count)
	if err != nil {
		return err
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

// setArgs checks a memset of count > 0 bytes: NULL is the ACL layer's
// ACL_ERROR_INVALID_PARAM, count > maxCount the runtime's
// ACL_ERROR_RT_PARAM_INVALID (api_error.cc:3134-3136), then the range.
func (c *call) setArgs(p unsafe.Pointer, maxCount, count uintptr) (loc, error) {
	switch {
	case p == nil:
		return loc{}, c.fail(acl.CodeInvalidParam, "null devPtr")
	case maxCount < count:
		return loc{}, c.fail(acl.CodeRTParamInvalid, "count %d is outside (0, %d]: it exceeds maxCount", count, maxCount)
	}
	l, err := c.checkRange("devPtr", p, count)
	if err != nil {
		return l, err
	}
	if l.Place == npuhook.PlaceHost {
		return l, c.fail(acl.CodeRTInvalidMemoryType, "%s needs device memory or aclrtMallocHost memory, but %s", c.op, describeLoc("devPtr", uintptr(p), l))
	}
	return l, nil
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
