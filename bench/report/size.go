package main

import (
	"math"
	"regexp"
	"strconv"
	"strings"
)

// sizeValue matches a byte count with an optional unit. A positional part
// must carry a unit that names bytes ("64B", "1MiB"), since a bare number or
// "4K" may count anything; a size= or bytes= key may also be a plain number.
var sizeValue = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)(B|KiB|MiB|GiB|TiB|KB|kB|MB|GB|TB|K|M|G)?$`)

var sizeMult = map[string]float64{
	"": 1, "B": 1,
	"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40,
	"K": 1 << 10, "M": 1 << 20, "G": 1 << 30,
	"KB": 1e3, "kB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
}

// parseSize returns the bytes a name part stands for, if it is size-like:
// size=16MiB, bytes=65536, or a positional 64B or 1MiB.
func parseSize(p part) (float64, bool) {
	switch p.key {
	case "size", "bytes":
	case "":
		if !strings.HasSuffix(p.value, "B") {
			return 0, false
		}
	default:
		return 0, false
	}
	m := sizeValue.FindStringSubmatch(p.value)
	if m == nil {
		return 0, false
	}
	n, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, false
	}
	return n * sizeMult[m[2]], true
}

// sizeOf finds a row's size: the last size-like part of its name. It
// returns the size and the name without that part (the row's group), or
// false if the name has no size.
func sizeOf(parts []part) (size float64, rest []part, ok bool) {
	for i := len(parts) - 1; i >= 0; i-- {
		if s, ok := parseSize(parts[i]); ok {
			rest = append(append(rest, parts[:i]...), parts[i+1:]...)
			return s, rest, true
		}
	}
	return 0, nil, false
}

// formatSize writes a byte count with the largest binary unit that keeps
// it at least 1: 64B, 1KiB, 1.5MiB.
func formatSize(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for i < len(units)-1 && math.Abs(b) >= 1024 {
		b /= 1024
		i++
	}
	return strconv.FormatFloat(math.Round(b*100)/100, 'f', -1, 64) + units[i]
}
