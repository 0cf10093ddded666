package examplecli

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
)

// Product multiplies non-negative factors; false when one is negative or
// the product passes math.MaxInt64 (a size no device has).
func Product(f ...int64) (int64, bool) {
	p := int64(1)
	for _, x := range f {
		if x < 0 {
			return 0, false
		}
		if x != 0 && p > math.MaxInt64/x {
			return 0, false
		}
		p *= x
	}
	return p, true
}

// Sum adds non-negative terms; false on a negative term or overflow.
func Sum(t ...int64) (int64, bool) {
	var s int64
	for _, x := range t {
		if x < 0 || s > math.MaxInt64-x {
			return 0, false
		}
		s += x
	}
	return s, true
}

// MemoryError is a job larger than the memory there is. It matches
// ErrUsage: the flags asked for it.
type MemoryError struct {
	What        string // what needs the memory
	Kind        string // "device" or "host"
	Need, Avail uint64
	Total       uint64 // 0 when unknown
	From        string // where Avail comes from
}

func (e *MemoryError) Error() string {
	s := fmt.Sprintf("%s needs %s of %s memory; there is %s", e.What, Size(e.Need), e.Kind, Size(e.Avail))
	if e.Total > 0 {
		s += fmt.Sprintf(" free of %s", Size(e.Total))
	}
	return s + " (" + e.From + ")"
}

func (e *MemoryError) Is(target error) bool { return target == ErrUsage }

// Size prints a byte count in binary units.
func Size(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// CheckDevice refuses need bytes beyond the free device memory dev
// reports (aclrtGetMemInfo, HBM), before anything is allocated.
func CheckDevice(dev *acl.Device, what string, need int64) error {
	free, total, err := dev.MemInfo(acl.HBMMem)
	if err != nil {
		return fmt.Errorf("device memory: %w", err)
	}
	if need < 0 || uint64(need) > uint64(free) {
		return &MemoryError{What: what, Kind: "device", Need: uint64(max(need, 0)), Avail: uint64(free), Total: uint64(total),
			From: "aclrtGetMemInfo"}
	}
	return nil
}

// HostAvailable is the memory the kernel says can be allocated without
// swapping (MemAvailable of /proc/meminfo); false when unknown.
func HostAvailable() (uint64, bool) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil || kb > math.MaxUint64>>10 {
			return 0, false
		}
		return kb << 10, true
	}
	return 0, false
}

// CheckHost refuses need bytes of host memory beyond MemAvailable (on the
// fallback the devices' memory is host memory too, so a job's device
// bytes count here as well). Unknown availability passes.
func CheckHost(what string, need int64) error {
	avail, ok := HostAvailable()
	if !ok {
		return nil
	}
	if need < 0 || uint64(need) > avail {
		return &MemoryError{What: what, Kind: "host", Need: uint64(max(need, 0)), Avail: avail, From: "MemAvailable in /proc/meminfo"}
	}
	return nil
}

// FallbackDeviceMemory is the device size a fallback program whose job
// size is not known in advance gives its NPU: the host memory available
// (the fallback's device memory is host memory, reserved but not
// committed until touched), at least fallback.DefaultDeviceMemory and at
// most fallback.MaxMemory. CheckDevice then refuses what the host cannot
// hold before it is allocated.
func FallbackDeviceMemory() uintptr {
	avail, ok := HostAvailable()
	if !ok {
		return fallback.DefaultDeviceMemory
	}
	return uintptr(min(max(avail, fallback.DefaultDeviceMemory), fallback.MaxMemory))
}
