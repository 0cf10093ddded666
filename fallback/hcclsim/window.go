package hcclsim

import (
	"unsafe"

	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/hccl"
)

// Buffer windows (HcclCommRegister, HcclCommDeregister,
// HcclCommExchangeMem) as the hcomm legacy tree has them
// (src/legacy/ascend910/framework/, public fork libochao-huawei/hcomm
// @8958adb): op_base/src/op_base.cc:5673-5722 checks the arguments, then
// communicator/impl/hccl_communicator_host.cc:9279-9389
// (RegisterCommUserMem, DeregisterCommUserMem, ExchangeCommUserMem) does
// the work. The window is "user memory" that replaces the communicator's
// CCL buffer, so the two exclude each other (ch:9281, ch:2296-2306).

// DefaultSocName is the SoC the model's devices are when neither
// Options.SocName nor the NPU (New takes its fallback.WithSocName) says
// otherwise: fallback.DefaultSocName, an Atlas A3 (DEV_TYPE_910_93), so
// that the A3-only buffer windows the docs promise work and the NPU and
// its HCCL model are one SoC.
const DefaultSocName = fallback.DefaultSocName

// a3Socs are the SoC names the device maps to DEV_TYPE_910_93
// (platform/inc/adapter/adapter_hal.h:50-57, SOC_VER_CONVERT); windows
// exist on these only.
var a3Socs = map[string]bool{
	"Ascend910_9391": true, "Ascend910_9381": true, "Ascend910_9392": true, "Ascend910_9382": true,
	"Ascend910_9372": true, "Ascend910_9362": true, "Ascend910_9363": true,
}

// maxWindowPeers is MAX_RANK_NUM_A3 (pub_inc/aicpu_operator_pub.h:238),
// the most peers one HcclCommExchangeMem names (op_base.cc:5714-5719).
const maxWindowPeers = 768

// windowsSupported is the device-type check of all three window calls
// (ch:9282, 9306, 9329): HCCL_E_NOT_SUPPORT off an A3.
func (c *comm) windowsSupported(op string) error {
	if !c.a3 {
		return hccl.Errorf(op, hccl.ENotSupport, "buffer windows need an Atlas A3 (Ascend910_93xx); this device is %s", c.sim.opts.SocName)
	}
	return nil
}

// cclBuffer is what a collective of a multi-rank communicator does at
// its call (ExecOp, ch:4665-4667): it creates the CCL buffer, which a
// registered window forbids (HCCL_E_NOT_SUPPORT, ch:2296-2306); once the
// buffer exists, CommRegister is refused (ch:9282-9290).
func (c *comm) cclBuffer(op string) error {
	if c.n < 2 {
		return nil
	}
	c.os.mu.Lock()
	defer c.os.mu.Unlock()
	if len(c.os.windows) > 0 {
		return hccl.Errorf(op, hccl.ENotSupport, "a buffer window (HcclCommRegister) is registered on this communicator: it replaces the CCL buffer the operation needs; deregister it first")
	}
	c.os.cclBuf = true
	return nil
}

// CommRegister registers a buffer window with the communicator. The flag
// is reserved and ignored (op_base.cc:5673 [[maybe_unused]]).
func (s *Sim) CommRegister(h hccl.CommHandle, addr unsafe.Pointer, size uint64, flag uint32) (hccl.RegistrationHandle, error) {
	const op = "HcclCommRegister"
	c, err := s.comm(op, h)
	if err != nil {
		return 0, err
	}
	// op_base.cc:5676-5679: null pointers, then size 0.
	switch {
	case addr == nil:
		return 0, hccl.Errorf(op, hccl.EPtr, "null address")
	case size == 0:
		return 0, hccl.Errorf(op, hccl.EPara, "size 0")
	}
	if err := c.windowsSupported(op); err != nil {
		return 0, err
	}
	// The device keeps the address without looking at it; the fallback
	// checks it here, since it serves the peers' reads from it.
	if _, err := c.view(addr, size); err != nil {
		return 0, herr(op, err)
	}
	c.os.mu.Lock()
	defer c.os.mu.Unlock()
	// ch:9282-9290: one window per communicator, and none once the CCL
	// buffer exists.
	switch {
	case len(c.os.windows) > 0:
		return 0, hccl.Errorf(op, hccl.ENotSupport, "this communicator already has a buffer window (one per communicator)")
	case c.os.cclBuf:
		return 0, hccl.Errorf(op, hccl.ENotSupport, "this communicator's CCL buffer exists (a collective ran on it); a window replaces that buffer and must come first")
	}
	c.os.nextWin += 0x40
	w := 0x7000 + c.os.nextWin
	c.os.windows[w] = &window{addr: addr, size: size, peers: map[int][2]uint64{}}
	return hccl.RegistrationHandle(w), nil
}

// CommDeregister releases a window; a handle the communicator does not
// hold succeeds (ch:9313-9315, a warning on the device).
func (s *Sim) CommDeregister(h hccl.CommHandle, w hccl.RegistrationHandle) error {
	const op = "HcclCommDeregister"
	c, err := s.comm(op, h)
	if err != nil {
		return err
	}
	if w == 0 {
		return hccl.Errorf(op, hccl.EPtr, "null window handle") // op_base.cc:5696
	}
	if err := c.windowsSupported(op); err != nil {
		return err
	}
	c.os.mu.Lock()
	defer c.os.mu.Unlock()
	delete(c.os.windows, uintptr(w))
	return nil
}

// CommExchangeMem exchanges a window with each listed peer (which must
// call it naming this rank); all pairings proceed at once. The caller's
// own rank in the list is skipped (ch:9358-9369).
func (s *Sim) CommExchangeMem(h hccl.CommHandle, w hccl.RegistrationHandle, peerRanks []uint32) error {
	const op = "HcclCommExchangeMem"
	c, err := s.comm(op, h)
	if err != nil {
		return err
	}
	switch {
	case w == 0:
		return hccl.Errorf(op, hccl.EPtr, "null window handle") // op_base.cc:5711
	case len(peerRanks) == 0 || len(peerRanks) > maxWindowPeers:
		return hccl.Errorf(op, hccl.EPara, "%d peers: want 1 to %d", len(peerRanks), maxWindowPeers) // op_base.cc:5714-5719
	}
	if err := c.windowsSupported(op); err != nil {
		return err
	}
	if len(peerRanks) > c.n {
		return hccl.Errorf(op, hccl.EPara, "%d peers for a communicator of %d ranks", len(peerRanks), c.n) // ch:9337-9343
	}
	c.os.mu.Lock()
	win := c.os.windows[uintptr(w)]
	c.os.mu.Unlock()
	if win == nil {
		return hccl.Errorf(op, hccl.ENotFound, "window %#x is not registered on this communicator", uintptr(w)) // ch:9345-9348
	}
	peers := make([]int, 0, len(peerRanks))
	for _, p := range peerRanks {
		switch {
		case int(p) >= c.n:
			// The device indexes its rank table with it unchecked
			// (transport_manager.cc:311); the fallback refuses it.
			return hccl.Errorf(op, hccl.EPara, "peer %d of a communicator of %d ranks", p, c.n)
		case int(p) != c.rank:
			peers = append(peers, int(p))
		}
	}
	offer := pairOffer{Count: uint64(uintptr(win.addr)), Payload: [][]byte{le64(win.size)}}
	errs := make([]error, len(peers))
	res := make([]pairResult, len(peers))
	done := make(chan int, len(peers))
	for i, p := range peers {
		go func(i, p int) {
			res[i], errs[i] = c.tr.pair(c, pairWin, p, c.rank < p, offer, c.timeout)
			done <- i
		}(i, p)
	}
	for range peers {
		<-done
	}
	for _, e := range errs {
		if e != nil {
			return herr(op, e)
		}
	}
	c.os.mu.Lock()
	defer c.os.mu.Unlock()
	for i, p := range peers {
		size := uint64(0)
		if len(res[i].peer.Payload) == 1 && len(res[i].peer.Payload[0]) == 8 {
			size = leU64(res[i].peer.Payload[0])
		}
		win.peers[p] = [2]uint64{res[i].peer.Count, size}
	}
	return nil
}
