package gert

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/ascend-go/cann/acl"
)

// RefCounted is a Manager for one block of memory with a share count: the
// block is released by its release function when the last owner frees it.
// It is safe for concurrent use.
type RefCounted struct {
	release func(addr unsafe.Pointer) error
	owners  atomic.Int64
}

// NewRefCounted returns a manager with one owner whose last Free calls
// release once.
func NewRefCounted(release func(addr unsafe.Pointer) error) *RefCounted {
	m := &RefCounted{release: release}
	m.owners.Store(1)
	return m
}

// Owners returns the number of owners still holding the memory.
func (m *RefCounted) Owners() int64 {
	if m == nil {
		return 0
	}
	return m.owners.Load()
}

// Address returns addr: the handle is the data address.
func (m *RefCounted) Address(addr unsafe.Pointer) (unsafe.Pointer, error) { return addr, nil }

// AddShare adds an owner; sharing memory already released is an error.
func (m *RefCounted) AddShare(addr unsafe.Pointer) error {
	if m == nil {
		return acl.NilHandle("gert.RefCounted.AddShare", "manager")
	}
	for {
		n := m.owners.Load()
		if n <= 0 {
			return fmt.Errorf("%w: share of released memory %p", ErrDoubleFree, addr)
		}
		if m.owners.CompareAndSwap(n, n+1) {
			return nil
		}
	}
}

// Free drops an owner and releases the memory when it was the last.
func (m *RefCounted) Free(addr unsafe.Pointer) error {
	if m == nil {
		return acl.NilHandle("gert.RefCounted.Free", "manager")
	}
	n := m.owners.Add(-1)
	switch {
	case n == 0:
		if m.release == nil {
			return nil
		}
		return m.release(addr)
	case n < 0:
		m.owners.Add(1)
		return fmt.Errorf("%w: memory %p released already", ErrDoubleFree, addr)
	}
	return nil
}
