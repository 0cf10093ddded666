package gert

import "strconv"

// TensorPlacement says where a tensor's data lives. The values are GE's
// (graph_metadef inc/external/exe_graph/runtime/tensor_data.h: kOnDeviceHbm,
// kOnHost, kFollowing, kOnDeviceP2p, kTensorPlacementEnd).
type TensorPlacement int32

// Placements.
const (
	// OnDeviceHbm is device memory (HBM).
	OnDeviceHbm TensorPlacement = iota
	// OnHost is host memory.
	OnHost
	// Following is host memory that follows the tensor header directly; in
	// Go it is host memory the tensor itself holds.
	Following
	// OnDeviceP2p is device memory reachable by peer devices.
	OnDeviceP2p
	// PlacementEnd is no placement: the placement of empty data.
	PlacementEnd
)

var placementNames = [...]string{"OnDeviceHbm", "OnHost", "Following", "OnDeviceP2p", "PlacementEnd"}

func (p TensorPlacement) String() string {
	if p >= 0 && int(p) < len(placementNames) {
		return placementNames[p]
	}
	return "TensorPlacement(" + strconv.Itoa(int(p)) + ")"
}

// Valid reports whether p names a real placement (not PlacementEnd).
func (p TensorPlacement) Valid() bool { return p >= OnDeviceHbm && p < PlacementEnd }

// OnDevice reports whether data at p is device memory.
func (p TensorPlacement) OnDevice() bool { return p == OnDeviceHbm || p == OnDeviceP2p }

// OnHostSide reports whether data at p is host memory.
func (p TensorPlacement) OnHostSide() bool { return p == OnHost || p == Following }
