package hcclsim

import (
	"bytes"
	"encoding/binary"
	"net"
)

// Root info layout (the 4108 opaque bytes of HcclRootInfo): a magic word,
// the world id, the pid of the process that created it, the world's secret
// (auth.go), and the loopback address of its rendezvous (hub). The rest is
// zero.
var rootMagic = [8]byte{'H', 'C', 'S', 'I', 'M', 'R', 'T', '2'}

const (
	rootInfoBytes = 4108
	rootOffID     = 8
	rootOffPid    = 24
	rootOffSecret = 28
	rootOffAddr   = rootOffSecret + secretBytes // length byte, then the address
)

type rootInfo struct {
	id     [16]byte
	pid    int
	secret worldSecret
	addr   string
}

func (r rootInfo) encode() (b [rootInfoBytes]byte) {
	copy(b[0:8], rootMagic[:])
	copy(b[rootOffID:rootOffID+16], r.id[:])
	binary.LittleEndian.PutUint32(b[rootOffPid:], uint32(r.pid))
	copy(b[rootOffSecret:rootOffAddr], r.secret[:])
	b[rootOffAddr] = byte(len(r.addr))
	copy(b[rootOffAddr+1:], r.addr)
	return b
}

// decodeRootInfo accepts only what encode produces: the magic word, a pid,
// and a loopback host:port (the rendezvous never listens elsewhere).
func decodeRootInfo(b []byte) (r rootInfo, ok bool) {
	if len(b) < rootInfoBytes || !bytes.Equal(b[0:8], rootMagic[:]) {
		return r, false
	}
	copy(r.id[:], b[rootOffID:rootOffID+16])
	r.pid = int(binary.LittleEndian.Uint32(b[rootOffPid:]))
	copy(r.secret[:], b[rootOffSecret:rootOffAddr])
	n := int(b[rootOffAddr])
	if n == 0 || r.pid <= 0 {
		return r, false
	}
	r.addr = string(b[rootOffAddr+1 : rootOffAddr+1+n])
	host, port, err := net.SplitHostPort(r.addr)
	if err != nil || port == "" {
		return r, false
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return r, false
	}
	return r, true
}
