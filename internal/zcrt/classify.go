package zcrt

import "github.com/ascend-go/cann/ge"

// AddrType is the memory type of a task-argument address (GE's
// MemoryAppType).
type AddrType uint8

// Address types.
const (
	// AddrFixed is a fixed address: weights, constants, and any address a
	// task cannot have refreshed (a slot with NoZeroCopy).
	AddrFixed AddrType = iota
	// AddrFeatureMap lies in the feature map, [0, MemorySize-ZeroCopySize)
	// of the model memory region.
	AddrFeatureMap
	// AddrModelIO lies in a zero-copy model input or output block.
	AddrModelIO
)

// String returns the name of the address type.
func (t AddrType) String() string {
	switch t {
	case AddrFixed:
		return "Fixed"
	case AddrFeatureMap:
		return "FeatureMap"
	case AddrModelIO:
		return "ModelIO"
	}
	return "AddrType(?)"
}

// Refresh-type bits of a task (GE's TaskArgsRefreshTypeClassifier): a
// task's flag is the OR over its addresses.
const (
	// RefreshByModelIO: the task holds a model IO address, re-patched when
	// the caller's buffer changes.
	RefreshByModelIO uint64 = 1 << 0
	// RefreshByFM: the task holds a feature-map address, re-patched when
	// the feature-map base moves (only when feature-map refresh is on).
	RefreshByFM uint64 = 1 << 1
)

// ClassifySlot returns the memory type of a slot of model m by its logical
// address, as GE classifies by the allocation an address falls in: a
// MemFixed slot is Fixed; any other slot is FeatureMap when its offset lies
// in [0, FeatureMapSize) and ModelIO when it lies in the IO region. A
// ModelIO address whose task cannot take an external address (NoZeroCopy)
// becomes Fixed, as GE turns an unrefreshable address into a fixed one.
func ClassifySlot(m *ge.CompiledModel, s ge.ArgSlot) AddrType {
	if s.Mem == ge.MemFixed {
		return AddrFixed
	}
	if s.Offset < m.FeatureMapSize() {
		return AddrFeatureMap
	}
	if s.NoZeroCopy {
		return AddrFixed
	}
	return AddrModelIO
}

// RefreshType is the refresh bit an address of type t needs: ModelIO
// always, FeatureMap only when feature-map refresh is enabled, Fixed never.
func RefreshType(t AddrType, fmRefresh bool) uint64 {
	switch t {
	case AddrModelIO:
		return RefreshByModelIO
	case AddrFeatureMap:
		if fmRefresh {
			return RefreshByFM
		}
	}
	return 0
}

// TaskRefreshType is the OR of RefreshType over the task's slots.
func TaskRefreshType(m *ge.CompiledModel, t *ge.Task, fmRefresh bool) uint64 {
	var f uint64
	for _, s := range t.Args {
		f |= RefreshType(ClassifySlot(m, s), fmRefresh)
	}
	return f
}
