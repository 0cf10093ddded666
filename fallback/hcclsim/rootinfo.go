package hcclsim

import (
	"bytes"
	"encoding/binary"
)

// Root info layout (the 4108 opaque bytes of HcclRootInfo): a magic word,
// the world id, the pid of the process that created it, and the loopback
// address of its rendezvous (hub).
var rootMagic = [8]byte{'H', 'C', 'S', 'I', 'M', 'R', 'T', '1'}

const rootInfoBytes = 4108

type rootInfo struct {
	id   [16]byte
	pid  int
	addr string
}

func (r rootInfo) encode() (b [rootInfoBytes]byte) {
	copy(b[0:8], rootMagic[:])
	copy(b[8:24], r.id[:])
	binary.LittleEndian.PutUint32(b[24:], uint32(r.pid))
	b[28] = byte(len(r.addr))
	copy(b[29:], r.addr)
	return b
}

func decodeRootInfo(b []byte) (r rootInfo, ok bool) {
	if len(b) < rootInfoBytes || !bytes.Equal(b[0:8], rootMagic[:]) {
		return r, false
	}
	copy(r.id[:], b[8:24])
	r.pid = int(binary.LittleEndian.Uint32(b[24:]))
	n := int(b[28])
	if n == 0 || 29+n > len(b) {
		return r, false
	}
	r.addr = string(b[29 : 29+n])
	return r, true
}
