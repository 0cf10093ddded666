package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/ascend-go/cann/acl"
)

// NumPy .npy files (format version 1.0/2.0): a magic, a header dict with
// descr, fortran_order and shape, then the raw little-endian data.

var npyTypes = map[string]acl.DataType{"<f4": acl.Float32, "<f2": acl.Float16, "<f8": acl.Float64,
	"<i8": acl.Int64, "<i4": acl.Int32, "<i2": acl.Int16, "|i1": acl.Int8,
	"<u8": acl.Uint64, "<u4": acl.Uint32, "<u2": acl.Uint16, "|u1": acl.Uint8, "|b1": acl.Bool}

func npyDescr(dt acl.DataType) (string, bool) {
	for k, v := range npyTypes {
		if v == dt {
			return k, true
		}
	}
	return "", false
}

var (
	reDescr = regexp.MustCompile(`'descr':\s*'([^']*)'`)
	reOrder = regexp.MustCompile(`'fortran_order':\s*(True|False)`)
	reShape = regexp.MustCompile(`'shape':\s*\(([^)]*)\)`)
)

// readNpy returns the data type, dims and bytes of a .npy file.
func readNpy(path string) (acl.DataType, []int64, []byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, nil, nil, err
	}
	if len(b) < 10 || string(b[:6]) != "\x93NUMPY" {
		return 0, nil, nil, fmt.Errorf("%s: not a .npy file", path)
	}
	var hlen, off int
	switch b[6] {
	case 1:
		hlen, off = int(binary.LittleEndian.Uint16(b[8:])), 10
	case 2, 3:
		if len(b) < 12 {
			return 0, nil, nil, fmt.Errorf("%s: truncated header", path)
		}
		hlen, off = int(binary.LittleEndian.Uint32(b[8:])), 12
	default:
		return 0, nil, nil, fmt.Errorf("%s: .npy version %d", path, b[6])
	}
	if off+hlen > len(b) {
		return 0, nil, nil, fmt.Errorf("%s: truncated header", path)
	}
	h := string(b[off : off+hlen])
	d, o, s := reDescr.FindStringSubmatch(h), reOrder.FindStringSubmatch(h), reShape.FindStringSubmatch(h)
	if d == nil || o == nil || s == nil {
		return 0, nil, nil, fmt.Errorf("%s: header %q lacks descr, fortran_order or shape", path, h)
	}
	dt, ok := npyTypes[d[1]]
	if !ok {
		return 0, nil, nil, fmt.Errorf("%s: dtype %s (want <f4, <f2, <i8, <i4, |b1, |u1 or |i1)", path, d[1])
	}
	if o[1] == "True" {
		return 0, nil, nil, fmt.Errorf("%s: Fortran-order arrays are not supported", path)
	}
	var dims []int64
	n := int64(1)
	for _, f := range strings.Split(s[1], ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil || v < 0 || (v > 0 && n > (1<<40)/v) {
			return 0, nil, nil, fmt.Errorf("%s: bad shape %q", path, s[1])
		}
		dims = append(dims, v)
		n *= v
	}
	data := b[off+hlen:]
	if int64(len(data)) != n*int64(dt.Size()) {
		return 0, nil, nil, fmt.Errorf("%s: %d data bytes, shape %v of %s needs %d", path, len(data), dims, d[1], n*int64(dt.Size()))
	}
	return dt, dims, data, nil
}

// writeNpy writes a version 1.0 .npy file.
func writeNpy(w io.Writer, dt acl.DataType, dims []int64, data []byte) error {
	descr, ok := npyDescr(dt)
	if !ok {
		return fmt.Errorf("no .npy dtype for %s", dt)
	}
	var shape strings.Builder
	for _, d := range dims {
		fmt.Fprintf(&shape, "%d,", d)
	}
	s := shape.String()
	if len(dims) > 1 {
		s = strings.TrimSuffix(s, ",")
	}
	h := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, s)
	pad := 64 - (10+len(h)+1)%64
	h += strings.Repeat(" ", pad%64) + "\n"
	var buf bytes.Buffer
	buf.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&buf, binary.LittleEndian, uint16(len(h)))
	buf.WriteString(h)
	buf.Write(data)
	_, err := w.Write(buf.Bytes())
	return err
}
