package npuhook

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ascend-go/cann/ge/gert"
)

// TestTensorPlacement pins the module's one mapping from where a pointer
// lives to GE's placement vocabulary.
func TestTensorPlacement(t *testing.T) {
	for p, want := range map[Place]gert.TensorPlacement{
		PlaceDevice:     gert.OnDeviceHbm,
		PlaceRegistered: gert.OnDeviceHbm,
		PlaceHost:       gert.OnHost,
		PlacePinned:     gert.OnHost,
		PlaceInvalid:    gert.PlacementEnd,
	} {
		assert.Equal(t, want, p.TensorPlacement(), "%v", p)
	}
}
