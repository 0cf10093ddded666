package fallback

import (
	"fmt"
	"slices"
)

// LeakKind says what kind of resource leaked.
type LeakKind uint8

// Kinds of leaked resources.
const (
	LeakDeviceMemory LeakKind = iota + 1 // Malloc without Free
	LeakHostMemory                       // MallocHost without FreeHost
	LeakRegistration                     // HostRegister without HostUnregister
	LeakStream                           // CreateStream without DestroyStream
	LeakEvent                            // CreateEvent without DestroyEvent
	LeakContext                          // CreateContext without DestroyContext
	LeakModel                            // a model loaded and not unloaded (Addr is the model id)
)

var leakNames = [...]string{"", "device memory", "host memory", "host registration", "stream", "event", "context", "model"}

// String names the kind ("device memory", "stream", ...).
func (k LeakKind) String() string {
	if int(k) < len(leakNames) && k != 0 {
		return leakNames[k]
	}
	return fmt.Sprintf("LeakKind(%d)", uint8(k))
}

// Leak is a resource the program left for ResetDevice, DestroyContext,
// FreeHost (registrations inside the block), Finalize or Close to release.
type Leak struct {
	Kind   LeakKind
	Device int32   // device, or -1 for host resources
	Addr   uintptr // memory address, or the handle value
	Size   uintptr // bytes, for memory and registrations
	Where  string  // file:line of the call that created it, when known
	At     string  // the call that released it (aclrtResetDevice, aclFinalize, Close, ...)
}

// String describes the leak on one line: what, where it was created, what
// released it.
func (l Leak) String() string {
	s := fmt.Sprintf("%s 0x%x", l.Kind, l.Addr)
	if l.Size != 0 {
		s += fmt.Sprintf(" (%d bytes)", l.Size)
	}
	if l.Device >= 0 {
		s += fmt.Sprintf(" on device %d", l.Device)
	}
	if l.Where != "" {
		s += " created at " + l.Where
	}
	return s + " released by " + l.At
}

func (n *NPU) recordLeak(l Leak) {
	n.leakMu.Lock()
	n.leaks = append(n.leaks, l)
	n.leakMu.Unlock()
}

// Leaks returns every leak recorded since New (or the last ClearLeaks), in
// the order they were found. A program that releases everything it creates
// has none.
func (n *NPU) Leaks() []Leak {
	if n == nil {
		return nil
	}
	n.leakMu.Lock()
	defer n.leakMu.Unlock()
	return slices.Clone(n.leaks)
}

// ClearLeaks forgets the recorded leaks.
func (n *NPU) ClearLeaks() {
	if n == nil {
		return
	}
	n.leakMu.Lock()
	n.leaks = nil
	n.leakMu.Unlock()
}
