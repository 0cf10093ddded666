package hccltest

import (
	"encoding/binary"
	"fmt"
	"testing"
	"unsafe"

	"github.com/ascend-go/cann/hccl"
)

// SocEnv is implemented by envs that model the device's SoC (the fallback
// and the stub model an Atlas A3 by default). Buffer windows exist on an
// A3 only, so the suite checks the other generations through it.
type SocEnv interface {
	// WithSoc returns an env whose communicators run on devices of SoC
	// name (for example "Ascend910B1", an Atlas A2) and a function that
	// releases it; the suite uses one of the two envs at a time.
	WithSoc(name string) (Env, func(), error)
}

// nonA3Soc is the SoC the Windows/OtherSoc subtest switches to: an Atlas
// A2 (DEV_TYPE_910B).
const nonA3Soc = "Ascend910B1"

// testWindows: buffer windows (HcclCommRegister, HcclCommDeregister,
// HcclCommExchangeMem) as the hcomm legacy tree has them
// (src/legacy/ascend910/framework/: op_base/src/op_base.cc:5673-5722 (ob),
// communicator/impl/hccl_communicator_host.cc:9279-9389 (ch)).
func (s *suite) testWindows(t *testing.T) {
	t.Run("A3", s.testWindowsA3)
	t.Run("OtherSoc", s.testWindowsOtherSoc)
}

func (s *suite) testWindowsA3(t *testing.T) {
	n := min(3, s.maxRanks)
	g := s.newGroup(t, n).mustInit()
	b := g.b
	wins := make([]hccl.RegistrationHandle, n)
	mem := make([]unsafe.Pointer, n)
	errs := g.each(func(w *worker) error {
		p, err := w.alloc(8192)
		if err != nil {
			return err
		}
		mem[w.rank] = p
		// ob:5673: the flag is [[maybe_unused]]: any value registers.
		wins[w.rank], err = b.CommRegister(w.comm, p, 8192, 0x5a)
		return err
	})
	s.unsupported(t, Windows, errs[0])
	g.noErr("CommRegister with flag 0x5a", errs)
	g.noErr("window checks", g.some([]int{0}, func(w *worker) error {
		c := w.comm
		_, err := b.CommRegister(c, nil, 64, 0)
		code(t, hccl.EPtr, err, "CommRegister of a null address") // ob:5677
		_, err = b.CommRegister(c, mem[0], 0, 0)
		code(t, hccl.EPara, err, "CommRegister of size 0") // ob:5679
		_, err = b.CommRegister(c, mem[0], 64, 0)
		code(t, hccl.ENotSupport, err, "a second CommRegister (one window per communicator)")            // ch:9282-9290
		code(t, hccl.EPtr, b.CommExchangeMem(c, 0, []uint32{1}), "CommExchangeMem of a null handle")     // ob:5711
		code(t, hccl.EPara, b.CommExchangeMem(c, wins[0], []uint32{}), "CommExchangeMem naming no peer") // ob:5714-5719
		many := make([]uint32, n+1)
		for i := range many {
			many[i] = 1
		}
		code(t, hccl.EPara, b.CommExchangeMem(c, wins[0], many), "CommExchangeMem naming more peers than ranks")          // ch:9337-9343
		code(t, hccl.ENotFound, b.CommExchangeMem(c, wins[0]+12345, []uint32{1}), "CommExchangeMem of an unknown window") // ch:9345-9348
		// The device indexes its rank table with the peer unchecked
		// (transport_manager.cc:311); the fallback and the stub refuse it.
		code(t, hccl.EPara, b.CommExchangeMem(c, wins[0], []uint32{uint32(n)}), "CommExchangeMem with rank = size")
		// ch:9358-9369: the caller's own rank needs no transport.
		code(t, hccl.Success, b.CommExchangeMem(c, wins[0], []uint32{0}), "CommExchangeMem with the caller alone")
		return nil
	}))
	// Every rank names every rank, itself included (skipped, ch:9366-9368).
	g.noErr("CommExchangeMem", g.each(func(w *worker) error {
		all := make([]uint32, n)
		for q := range all {
			all[q] = uint32(q)
		}
		return b.CommExchangeMem(w.comm, wins[w.rank], all)
	}))
	if n > 1 {
		// The window replaces the CCL buffer a collective creates at its
		// call (ExecOp, ch:4665-4667): refused while registered
		// (CreateCommCCLbuffer, ch:2296-2306).
		allCode(t, hccl.ENotSupport, g.each(func(w *worker) error {
			return b.AllReduce(mem[w.rank], mem[w.rank], 4, hccl.Int32, hccl.Sum, w.comm, w.r.Stream())
		}), nil, "AllReduce while a window is registered")
	}
	g.noErr("CommDeregister", g.each(func(w *worker) error {
		if err := b.CommDeregister(w.comm, wins[w.rank]); err != nil {
			return err
		}
		// ch:9313-9315: a handle not registered succeeds (a warning).
		code(t, hccl.Success, b.CommDeregister(w.comm, wins[w.rank]), "CommDeregister twice")
		code(t, hccl.Success, b.CommDeregister(w.comm, wins[w.rank]+12345), "CommDeregister of an unknown window")
		code(t, hccl.EPtr, b.CommDeregister(w.comm, 0), "CommDeregister of a null handle") // ob:5696
		return nil
	}))
	if n > 1 {
		// Deregistered, the collective runs and creates the CCL buffer;
		// from then on no window can be registered (ch:9282-9283).
		rng := s.rng(t)
		in := make([][]int32, n)
		want := make([]int32, 16)
		// Drawn here, not in the ranks' goroutines: rng is not safe for
		// concurrent use.
		for r := range in {
			in[r] = make([]int32, len(want))
			for i := range in[r] {
				in[r][i] = int32(rng.Uint32()) >> 8
			}
		}
		for _, v := range in {
			for i := range want {
				want[i] += v[i]
			}
		}
		g.noErr("AllReduce after CommDeregister", g.each(func(w *worker) error {
			buf := make([]byte, 4*len(want))
			for i, v := range in[w.rank] {
				binary.LittleEndian.PutUint32(buf[4*i:], uint32(v))
			}
			if err := w.r.Write(mem[w.rank], buf); err != nil {
				return err
			}
			if err := b.AllReduce(mem[w.rank], mem[w.rank], uint64(len(want)), hccl.Int32, hccl.Sum, w.comm, w.r.Stream()); err != nil {
				return err
			}
			if err := w.r.Sync(); err != nil {
				return err
			}
			got, err := w.read(mem[w.rank], len(buf))
			if err != nil {
				return err
			}
			for i := range want {
				if v := int32(binary.LittleEndian.Uint32(got[4*i:])); v != want[i] {
					return fmt.Errorf("rank %d element %d: %d, want %d", w.rank, i, v, want[i])
				}
			}
			_, err = b.CommRegister(w.comm, mem[w.rank], 8192, 0)
			code(t, hccl.ENotSupport, err, "CommRegister once the CCL buffer exists")
			return nil
		}))
	}
	g.noErr("free", g.each(func(w *worker) error { return w.free(mem[w.rank]) }))
	g.noErr("CommDestroy", g.destroy())
}

// testWindowsOtherSoc: off an A3 every window call is HCCL_E_NOT_SUPPORT
// once its arguments passed op_base's checks (ch:9282, 9306, 9329).
func (s *suite) testWindowsOtherSoc(t *testing.T) {
	se, ok := s.env.(SocEnv)
	if !ok {
		if s.lacks(SocSwitch) {
			s.skip(t, "the backend declares it lacks %s", SocSwitch)
		}
		t.Fatalf("the env does not implement SocEnv and does not declare it lacks %s (Options.Lacks)", SocSwitch)
	}
	env, release, err := se.WithSoc(nonA3Soc)
	if err != nil {
		t.Fatalf("WithSoc(%q): %v", nonA3Soc, err)
	}
	defer release()
	sub := *s
	sub.env, sub.b = env, env.Backend()
	sub.maxRanks = min(maxSuiteRanks, env.MaxRanks())
	n := min(2, sub.maxRanks)
	g := sub.newGroup(t, n).mustInit()
	b := g.b
	// A library without the window symbols answers ErrNotSupported before
	// any argument check; the null address is HCCL_E_PTR on any SoC.
	probe := g.some([]int{0}, func(w *worker) error {
		_, err := b.CommRegister(w.comm, nil, 64, 0)
		return err
	})
	s.unsupported(t, Windows, probe[0])
	g.noErr("window calls off an A3", g.each(func(w *worker) error {
		p, err := w.alloc(4096)
		if err != nil {
			return err
		}
		defer w.free(p)
		c := w.comm
		_, err = b.CommRegister(c, nil, 64, 0)
		code(t, hccl.EPtr, err, "CommRegister of a null address") // ob:5677, before the device check
		_, err = b.CommRegister(c, p, 0, 0)
		code(t, hccl.EPara, err, "CommRegister of size 0") // ob:5679
		_, err = b.CommRegister(c, p, 4096, 0)
		code(t, hccl.ENotSupport, err, "CommRegister on %s", nonA3Soc)                                          // ch:9282-9290
		code(t, hccl.EPtr, b.CommDeregister(c, 0), "CommDeregister of a null handle")                           // ob:5696
		code(t, hccl.ENotSupport, b.CommDeregister(c, 0x7040), "CommDeregister on %s", nonA3Soc)                // ch:9306-9311
		code(t, hccl.EPara, b.CommExchangeMem(c, 0x7040, []uint32{}), "CommExchangeMem naming no peer")         // ob:5714-5719
		code(t, hccl.ENotSupport, b.CommExchangeMem(c, 0x7040, []uint32{0}), "CommExchangeMem on %s", nonA3Soc) // ch:9329-9335
		return nil
	}))
	if n > 1 {
		// Collectives are not affected by the SoC: the CCL buffer is made.
		g.noErr("AllReduce on "+nonA3Soc, g.allReduceSync())
	}
	g.noErr("CommDestroy", g.destroy())
}
