package gert

import (
	"errors"
	"testing"
	"unsafe"
)

// FuzzTensorDataOps runs random sequences of create, move, share, free and
// address operations over a few TensorData slots. Whatever the sequence, no
// call panics, misuse is one of the package's errors, and once every slot is
// freed each owned block has been released exactly once.
func FuzzTensorDataOps(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte{0, 0x11, 0x21, 0x31, 0x31, 0x41})
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 512 {
			ops = ops[:512]
		}
		c := newCounting(t)
		var slots [4]*TensorData
		for i := range slots {
			slots[i] = &TensorData{}
		}
		var owned []unsafe.Pointer
		known := func(err error) bool {
			return err == nil || errors.Is(err, ErrMovedFrom) || errors.Is(err, ErrFreed) || errors.Is(err, ErrDoubleFree)
		}
		for _, op := range ops {
			i, j := int(op>>4)&3, int(op>>6)&3
			var err error
			switch op & 7 {
			case 0: // new owned data into slot i, through a move
				p := c.alloc(8)
				owned = append(owned, p)
				err = slots[i].MoveFrom(NewTensorData(p, 8, OnDeviceHbm, c))
			case 1: // borrowed data
				err = slots[i].MoveFrom(NewTensorData(unsafe.Pointer(&ops[0]), 1, OnHost, nil))
			case 2:
				err = slots[j].MoveFrom(slots[i])
			case 3:
				var s *TensorData
				if s, err = slots[i].Share(); err == nil {
					err = slots[j].MoveFrom(s)
				}
			case 4:
				err = slots[i].Free()
			case 5:
				_, err = slots[i].Addr()
			case 6: // a fresh slot replaces a moved-from or freed one
				if !slots[i].Held() {
					slots[i] = &TensorData{}
				}
			case 7:
				_ = slots[i].String()
			}
			if !known(err) {
				t.Fatalf("op %#x: unexpected error %v", op, err)
			}
		}
		for _, s := range slots {
			if s.Held() {
				if err := s.Free(); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, p := range owned {
			if c.released[p] != 1 {
				t.Fatalf("block %p released %d times", p, c.released[p])
			}
		}
	})
}
