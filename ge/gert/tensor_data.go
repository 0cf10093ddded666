package gert

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/ascend-go/cann/acl"
)

// Errors of TensorData misuse. Each is a defined outcome where GE's C++ would
// have undefined behaviour or a crash.
var (
	// ErrMovedFrom is returned by a TensorData whose data was moved away.
	ErrMovedFrom = errors.New("gert: tensor data was moved from")
	// ErrFreed is returned by a TensorData whose data was freed.
	ErrFreed = errors.New("gert: tensor data was freed")
	// ErrDoubleFree is returned by a second Free of the same data.
	ErrDoubleFree = errors.New("gert: tensor data freed twice")
	// ErrNilManager is returned where memory that must be freed has no manager.
	ErrNilManager = errors.New("gert: owned tensor data needs a manager")
)

// Manager manages the memory behind TensorData, one call per operation of GE's
// TensorAddrManager (kGetTensorAddress, kFreeTensor, kPlusShareCount).
// Free is called exactly once for each owner of the memory: once per
// TensorData holding it, after one AddShare per extra holder.
type Manager interface {
	// Address returns the data address of the memory handle addr.
	Address(addr unsafe.Pointer) (unsafe.Pointer, error)
	// Free releases one owner's hold on addr.
	Free(addr unsafe.Pointer) error
	// AddShare adds an owner to addr.
	AddShare(addr unsafe.Pointer) error
}

type dataState uint8

const (
	stateEmpty dataState = iota // no data (never set, or freed by SetData's target)
	stateHeld                   // holds data
	stateMoved                  // data moved to another TensorData
	stateFreed                  // data freed by Free
)

// TensorData is a tensor's memory: address, size, placement and the manager
// that frees it. A nil manager means the address is borrowed: it is used and
// never freed. Use it through a pointer; copying a TensorData value would
// duplicate ownership and is reported by go vet (copylocks).
//
// The zero value is empty data with placement OnDeviceHbm.
type TensorData struct {
	_         noCopy
	addr      unsafe.Pointer
	mgr       Manager
	size      uint64
	placement TensorPlacement
	state     dataState
}

// noCopy makes go vet's copylocks check report copies of a TensorData.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}

// NewTensorData returns data at addr of size bytes and the given placement.
// With a nil manager the memory is borrowed and never freed (GE's
// TensorData(addr, nullptr, ...)).
func NewTensorData(addr unsafe.Pointer, size uint64, placement TensorPlacement, m Manager) *TensorData {
	td := &TensorData{}
	td.set(addr, size, placement, m)
	return td
}

// NewOwnedTensorData is NewTensorData for memory that must be freed: a nil
// manager is an error instead of a silent leak.
func NewOwnedTensorData(addr unsafe.Pointer, size uint64, placement TensorPlacement, m Manager) (*TensorData, error) {
	if m == nil {
		return nil, fmt.Errorf("%w (address %p, %d bytes, %v)", ErrNilManager, addr, size, placement)
	}
	return NewTensorData(addr, size, placement, m), nil
}

func (t *TensorData) set(addr unsafe.Pointer, size uint64, placement TensorPlacement, m Manager) {
	t.addr, t.size, t.placement, t.mgr = addr, size, placement, m
	t.state = stateHeld
	if addr == nil && m == nil {
		t.state = stateEmpty
	}
}

func (t *TensorData) usable() error {
	if t == nil {
		return acl.NilHandle("gert.TensorData", "tensor data")
	}
	switch t.state {
	case stateMoved:
		return ErrMovedFrom
	case stateFreed:
		return ErrFreed
	}
	return nil
}

// Held reports whether t holds data (is neither empty, moved from nor freed).
func (t *TensorData) Held() bool { return t != nil && t.state == stateHeld }

// Owned reports whether t's memory has a manager that frees it.
func (t *TensorData) Owned() bool { return t.Held() && t.mgr != nil }

// Addr returns the data address (through the manager when there is one).
// Empty data has a nil address; moved-from or freed data is an error.
func (t *TensorData) Addr() (unsafe.Pointer, error) {
	if err := t.usable(); err != nil {
		return nil, err
	}
	if t.state == stateEmpty || t.mgr == nil {
		return t.addr, nil
	}
	return t.mgr.Address(t.addr)
}

// Size returns the data's size in bytes (0 when it holds none).
func (t *TensorData) Size() uint64 {
	if t == nil {
		return 0
	}
	if t.state != stateHeld {
		return 0
	}
	return t.size
}

// Placement returns where the data lives. Empty data keeps the placement it
// was given (what an output tensor asks for); moved-from data has
// PlacementEnd, as in GE.
func (t *TensorData) Placement() TensorPlacement {
	if t == nil {
		return 0
	}
	return t.placement
}

// SetPlacement sets the placement. It does not move memory.
func (t *TensorData) SetPlacement(p TensorPlacement) {
	if t == nil {
		return
	}
	t.placement = p
}

// SetSize sets the size of held data (GE's SetSize; the memory is unchanged).
func (t *TensorData) SetSize(size uint64) {
	if t == nil {
		return
	}
	t.size = size
}

// Free frees the data: the manager's Free is called once, and t becomes
// empty data (placement kept). Borrowed data is only forgotten. Free of empty
// data does nothing; of freed or moved-from data it is an error.
func (t *TensorData) Free() error {
	if t == nil {
		return nil
	}
	if t.state == stateFreed {
		return ErrDoubleFree
	}
	if err := t.usable(); err != nil {
		return err
	}
	if t.state == stateEmpty {
		return nil
	}
	addr, m := t.addr, t.mgr
	t.addr, t.mgr, t.size, t.state = nil, nil, 0, stateFreed
	if m == nil {
		t.state = stateEmpty
		return nil
	}
	return m.Free(addr)
}

// MoveFrom takes src's data into t, leaving src moved-from (nil address, no
// manager, size 0, PlacementEnd): GE's move assignment. Data t held before is
// freed first. Nothing is copied and nothing is freed twice.
func (t *TensorData) MoveFrom(src *TensorData) error {
	if src == nil {
		return errors.New("gert: move from nil tensor data")
	}
	if src == t {
		return nil
	}
	if err := src.usable(); err != nil {
		return err
	}
	if t.state == stateHeld {
		if err := t.Free(); err != nil {
			return err
		}
	}
	t.addr, t.mgr, t.size, t.placement, t.state = src.addr, src.mgr, src.size, src.placement, src.state
	src.addr, src.mgr, src.size, src.placement, src.state = nil, nil, 0, PlacementEnd, stateMoved
	return nil
}

// Share returns another owner of the same memory: the manager's AddShare is
// called once, and each of the two frees once. Sharing borrowed data gives
// another borrowed view.
func (t *TensorData) Share() (*TensorData, error) {
	if err := t.usable(); err != nil {
		return nil, err
	}
	if t.mgr != nil {
		if err := t.mgr.AddShare(t.addr); err != nil {
			return nil, err
		}
	}
	td := &TensorData{}
	td.addr, td.mgr, td.size, td.placement, td.state = t.addr, t.mgr, t.size, t.placement, t.state
	return td, nil
}

func (t *TensorData) String() string {
	if t == nil {
		return "<nil>"
	}
	var s string
	switch t.state {
	case stateEmpty:
		s = "empty"
	case stateMoved:
		s = "moved-from"
	case stateFreed:
		s = "freed"
	default:
		s = fmt.Sprintf("%p+%d", t.addr, t.size)
		if t.mgr == nil {
			s += " borrowed"
		}
	}
	return fmt.Sprintf("TensorData{%s %v}", s, t.placement)
}
