package fallback

import (
	"fmt"
	"strconv"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/internal/npuhook"
)

// loc is a classified pointer with the record that keeps it valid, so a
// queued task can check at run time that its memory still exists.
type loc struct {
	npuhook.Placement
	al    *alloc
	reg   *registration
	arena *arena
}

// alive reports an error when the memory behind l was freed or unregistered
// after l was taken.
func (l *loc) alive(role string) error {
	switch {
	case l.al != nil && l.al.freed.Load():
		return acl.Errorf("", acl.CodeRTDeviceMemError, "%s allocation 0x%x (%d bytes) was freed before the task ran", role, l.al.addr, l.al.size)
	case l.reg != nil && l.reg.gone.Load():
		return acl.Errorf("", acl.CodeRTDeviceMemError, "%s registration 0x%x (%d bytes) was removed before the task ran", role, l.reg.addr, l.reg.size)
	}
	return nil
}

// arenaOf returns the arena containing addr, by binary search over the
// arenas sorted by base.
func (n *NPU) arenaOf(addr uintptr) *arena {
	as := n.arenas
	lo, hi := 0, len(as)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if as[m].base <= addr {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return nil
	}
	if a := as[lo-1]; addr-a.base < a.size {
		return a
	}
	return nil
}

// overlapsArena reports whether [addr, addr+size) touches any arena.
func (n *NPU) overlapsArena(addr, size uintptr) bool {
	for _, a := range n.arenas {
		if addr < a.base+a.size && a.base < addr+size {
			return true
		}
	}
	return false
}

// locate classifies addr.
func (n *NPU) locate(addr uintptr) loc {
	if a := n.arenaOf(addr); a != nil {
		if a.dev >= 0 {
			if al := a.lookup(addr); al != nil {
				return loc{Placement: npuhook.Placement{Place: npuhook.PlaceDevice, Device: a.dev, Base: al.addr, Size: al.size}, al: al, arena: a}
			}
			return loc{Placement: npuhook.Placement{Place: npuhook.PlaceInvalid, Device: a.dev}, arena: a}
		}
		if r := n.findReg(addr); r != nil {
			return loc{Placement: npuhook.Placement{Place: npuhook.PlaceRegistered, Device: -1, Base: r.addr, Size: r.size}, reg: r}
		}
		if al := a.lookup(addr); al != nil {
			return loc{Placement: npuhook.Placement{Place: npuhook.PlacePinned, Device: -1, Base: al.addr, Size: al.size}, al: al, arena: a}
		}
		return loc{Placement: npuhook.Placement{Place: npuhook.PlaceInvalid, Device: -1}, arena: a}
	}
	if r := n.findReg(addr); r != nil {
		return loc{Placement: npuhook.Placement{Place: npuhook.PlaceRegistered, Device: -1, Base: r.addr, Size: r.size}, reg: r}
	}
	return loc{Placement: npuhook.Placement{Place: npuhook.PlaceHost, Device: -1}}
}

// checkRange classifies [ptr, ptr+size) and checks it lies inside one live
// allocation (device or pinned) or registration, or is plain host memory
// clear of the arenas. A range that starts in a registration and runs past
// it is treated as plain host memory.
func (c *call) checkRange(role string, ptr unsafe.Pointer, size uintptr) (loc, error) {
	addr := uintptr(ptr)
	if addr+size < addr {
		return loc{}, c.fail(acl.CodeRTParamInvalid, "%s range 0x%x+%d wraps the address space", role, addr, size)
	}
	l := c.n.locate(addr)
	switch l.Place {
	case npuhook.PlaceInvalid:
		return l, c.fail(acl.CodeRTParamInvalid, "%s pointer 0x%x is not inside a live allocation of %s: %s", role, addr, arenaName(l.Device), l.arena.explain(addr))
	case npuhook.PlaceDevice, npuhook.PlacePinned:
		if end := l.Base + l.Size; addr+size > end {
			return l, c.fail(acl.CodeRTParamInvalid, "%s range 0x%x+%d runs %d bytes past the end of %s allocation 0x%x (%d bytes, #%d)",
				role, addr, size, addr+size-end, l.Place, l.Base, l.Size, l.al.seq)
		}
	case npuhook.PlaceRegistered:
		if addr+size > l.Base+l.Size {
			l = loc{Placement: npuhook.Placement{Place: npuhook.PlaceHost, Device: -1}}
			if c.n.overlapsArena(addr, size) {
				return l, c.fail(acl.CodeRTParamInvalid, "%s range 0x%x+%d runs past registered memory into device or pinned memory", role, addr, size)
			}
		}
	case npuhook.PlaceHost:
		if c.n.overlapsArena(addr, size) {
			return l, c.fail(acl.CodeRTParamInvalid, "%s range 0x%x+%d starts in host memory and runs into device or pinned memory", role, addr, size)
		}
	}
	return l, nil
}

// describe names where addr lives, for messages.
func (n *NPU) describe(addr uintptr) string {
	l := n.locate(addr)
	switch l.Place {
	case npuhook.PlaceDevice:
		return fmt.Sprintf("inside device %d allocation 0x%x of %d bytes", l.Device, l.Base, l.Size)
	case npuhook.PlacePinned:
		return fmt.Sprintf("inside aclrtMallocHost block 0x%x of %d bytes", l.Base, l.Size)
	case npuhook.PlaceRegistered:
		return fmt.Sprintf("inside registered host memory 0x%x of %d bytes", l.Base, l.Size)
	case npuhook.PlaceInvalid:
		return fmt.Sprintf("in %s but not in a live allocation", arenaName(l.Device))
	}
	return "plain host memory"
}

func arenaName(dev int32) string {
	if dev < 0 {
		return "pinned host memory"
	}
	return "device " + strconv.Itoa(int(dev))
}

func describeLoc(role string, addr uintptr, l loc) string {
	switch l.Place {
	case npuhook.PlaceDevice:
		return fmt.Sprintf("%s 0x%x is device %d memory", role, addr, l.Device)
	case npuhook.PlacePinned:
		return fmt.Sprintf("%s 0x%x is pinned host memory", role, addr)
	case npuhook.PlaceRegistered:
		return fmt.Sprintf("%s 0x%x is registered host memory", role, addr)
	}
	return fmt.Sprintf("%s 0x%x is plain host memory", role, addr)
}

// classify is npuhook.NPU.Classify.
func (n *NPU) classify(ptr unsafe.Pointer) npuhook.Placement {
	if !n.enter() {
		return npuhook.Placement{Place: npuhook.PlaceInvalid, Device: -1}
	}
	defer n.exit()
	return n.locate(uintptr(ptr)).Placement
}
