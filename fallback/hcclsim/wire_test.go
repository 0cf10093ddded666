package hcclsim

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// randMsg is a message with every field set at random (descriptors of
// random shapes included).
func randMsg(r *rand.Rand) *msg {
	bs := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	u64s := func() []uint64 {
		if r.IntN(3) == 0 {
			return nil
		}
		v := make([]uint64, 1+r.IntN(5))
		for i := range v {
			v[i] = r.Uint64() >> r.IntN(64)
		}
		return v
	}
	desc := func() *opDesc {
		if r.IntN(4) == 0 {
			return nil
		}
		return &opDesc{Kind: opKind(r.Uint32()), Count: r.Uint64(), DT: dtype(r.Uint32()), Op: redOp(r.Uint32()),
			Root: r.Uint32(), SendCounts: u64s(), SDispls: u64s(), RecvCounts: u64s(), RDispls: u64s(), RecvDT: dtype(r.Uint32())}
	}
	m := &msg{Kind: msgKind(1 + r.IntN(int(mLastKind))), N: int(r.Int32()), Rank: -int(r.Int32()), Pid: int(r.Int32()),
		Code: r.Int32(), Text: string(bs(r.IntN(40))), Mode: uint8(r.Uint32()), StageBytes: int(r.Int64()),
		Seg: string(bs(r.IntN(20))), Seq: r.Uint64(), Desc: desc(), Timeout: time.Duration(r.Int64()),
		Id: r.Uint64(), PairKind: uint8(r.Uint32()), Peer: int(r.Int32()), Side: int(r.Int32()), PairSeq: r.Uint64(),
		Offer: pairOffer{Count: r.Uint64(), DT: dtype(r.Uint32())}}
	for range r.IntN(4) {
		m.Segs = append(m.Segs, string(bs(r.IntN(30))))
	}
	for range r.IntN(4) {
		m.Descs = append(m.Descs, desc())
	}
	for range r.IntN(4) {
		m.Offer.Payload = append(m.Offer.Payload, bs(1+r.IntN(64)))
	}
	if r.IntN(2) == 0 {
		m.Nonce, m.Proof = bs(nonceBytes), bs(32)
	}
	return m
}

// TestMsgRoundTrip: every field of a random message survives a frame.
func TestMsgRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
	for range 2000 {
		m := randMsg(r)
		var buf bytes.Buffer
		require.NoError(t, writeFrame(&buf, m))
		got, err := readFrame(&buf, maxFrame)
		require.NoError(t, err)
		require.Equal(t, m, got)
	}
}

// TestLargestMsgFits: the hub's answer to an AlltoAllV of maxWorldRanks
// ranks with large counts fits a frame and the decoding budget.
func TestLargestMsgFits(t *testing.T) {
	const n = maxWorldRanks
	ds := make([]*opDesc, n)
	for r := range ds {
		d := &opDesc{Kind: kindAlltoAllV, DT: dtInt128, RecvDT: dtInt128}
		for _, xs := range []*[]uint64{&d.SendCounts, &d.SDispls, &d.RecvCounts, &d.RDispls} {
			*xs = make([]uint64, n)
			for i := range *xs {
				(*xs)[i] = maxDescElems/2 + uint64(i)
			}
		}
		ds[r] = d
	}
	var buf bytes.Buffer
	require.NoError(t, writeFrame(&buf, &msg{Kind: mJoined, Seq: 1, Descs: ds}))
	require.LessOrEqual(t, buf.Len(), maxFrame)
	m, err := readFrame(&buf, maxFrame)
	require.NoError(t, err)
	require.Equal(t, ds, m.Descs)
}

// TestMsgDecodeBounds: lengths beyond the frame, values beyond their
// fields, unknown kinds, trailing bytes and frames over the link's cap are
// errors, and a frame of b bytes never allocates much more than b.
func TestMsgDecodeBounds(t *testing.T) {
	good := encodeMsg(nil, &msg{Kind: mHello, N: 2, Rank: 1, Segs: []string{"a", "b"}})
	_, err := decodeMsg(good)
	require.NoError(t, err)
	for name, b := range map[string][]byte{
		"empty":          {},
		"kind 0":         encodeMsg(nil, &msg{}),
		"unknown kind":   append([]byte{byte(mLastKind) + 1}, good[1:]...),
		"trailing bytes": append(append([]byte(nil), good...), 0),
		"truncated":      good[:len(good)-1],
		"rank count beyond int32": func() []byte {
			b := binary.AppendUvarint(nil, uint64(mHello))
			return binary.AppendVarint(b, 1<<50)
		}(),
		"list longer than the frame": func() []byte {
			// Segs is the 10th field: a huge count there.
			e := msgEnc{}
			e.u(uint64(mPeers))
			for range 3 {
				e.i(0)
			}
			e.i(0)
			e.str("")
			e.u(0)
			e.i(0)
			e.str("")
			e.u(1 << 40)
			return e.b
		}(),
	} {
		_, err := decodeMsg(b)
		assert.Error(t, err, name)
	}
	// Frames of many payloads: eight-byte ones (a window exchange's) decode;
	// one-byte ones cost more in slice headers than the budget allows, so
	// the decoder stops, having allocated within the budget.
	payloads := func(size int) []byte {
		e := msgEnc{b: binary.AppendUvarint(nil, uint64(mPair))}
		for range 3 {
			e.i(0)
		}
		e.i(0)
		e.str("")
		e.u(0)
		e.i(0)
		e.str("")
		e.u(0)
		e.u(0)
		e.u(0)
		e.u(0)
		e.i(0)
		e.u(0)
		e.u(0)
		e.i(0)
		e.i(0)
		e.u(0)
		e.u(0)
		e.u(0)
		e.u(1 << 18)
		for range 1 << 18 {
			e.bytes(make([]byte, size))
		}
		e.u(0)
		e.u(0)
		return e.b
	}
	m, err := decodeMsg(payloads(8))
	require.NoError(t, err, "a frame within the budget decodes")
	require.Len(t, m.Offer.Payload, 1<<18)
	b := payloads(1)
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	_, err = decodeMsg(b)
	runtime.ReadMemStats(&ms1)
	require.Error(t, err, "over the budget")
	// The budget is 16 bytes per frame byte; the allocator's rounding and
	// the race detector's own allocations get as much again.
	assert.Less(t, ms1.TotalAlloc-ms0.TotalAlloc, uint64(32*len(b)+(1<<20)), "decoding stays within its budget")
	var hdr [4]byte
	binary.LittleEndian.PutUint32(hdr[:], maxHelloFrame+1)
	_, err = readFrame(bytes.NewReader(append(hdr[:], make([]byte, maxHelloFrame+1)...)), maxHelloFrame)
	require.Error(t, err, "over the cap")
	binary.LittleEndian.PutUint32(hdr[:], 0xffffffff)
	var ms0b, ms1b runtime.MemStats
	runtime.ReadMemStats(&ms0b)
	for range 10 {
		_, err = readFrame(bytes.NewReader(hdr[:]), maxFrame)
		require.Error(t, err)
	}
	runtime.ReadMemStats(&ms1b)
	assert.Less(t, ms1b.TotalAlloc-ms0b.TotalAlloc, uint64(64<<10), "a refused frame allocates nothing of its size")
}

// FuzzDecodeMsg: no input makes the decoder panic or allocate beyond its
// budget, and whatever decodes encodes back to a message that decodes the
// same.
func FuzzDecodeMsg(f *testing.F) {
	r := rand.New(rand.NewPCG(7, 7))
	for range 8 {
		f.Add(encodeMsg(nil, randMsg(r)))
	}
	f.Add([]byte{byte(mHello)})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeMsg(b)
		if err != nil {
			return
		}
		again, err := decodeMsg(encodeMsg(nil, m))
		require.NoError(t, err)
		require.Equal(t, m, again)
	})
}

// FuzzRootInfo: no root info makes the decoder panic; one it accepts has a
// loopback address and encodes back to itself.
func FuzzRootInfo(f *testing.F) {
	good := rootInfo{id: [16]byte{1, 2, 3}, pid: 42, secret: newSecret(), addr: "127.0.0.1:4242"}.encode()
	f.Add(good[:])
	f.Add(good[:100])
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < rootInfoBytes {
			// Most of the 4108 bytes are padding: fuzz the head.
			b = append(b, make([]byte, rootInfoBytes-len(b))...)
		}
		r, ok := decodeRootInfo(b)
		if !ok {
			return
		}
		host, _, err := net.SplitHostPort(r.addr)
		require.NoError(t, err)
		require.True(t, net.ParseIP(host).IsLoopback())
		again, ok := decodeRootInfo(func() []byte { e := r.encode(); return e[:] }())
		require.True(t, ok)
		require.Equal(t, r, again)
	})
}

// TestRootInfoRejects: wrong magic, a non-loopback address, no pid.
func TestRootInfoRejects(t *testing.T) {
	ok := rootInfo{id: [16]byte{9}, pid: 7, secret: newSecret(), addr: "127.0.0.1:1"}
	_, good := decodeRootInfo(func() []byte { e := ok.encode(); return e[:] }())
	require.True(t, good)
	for name, r := range map[string]rootInfo{
		"remote address": {pid: 7, addr: "10.0.0.1:1"},
		"name":           {pid: 7, addr: "localhost:1"},
		"no port":        {pid: 7, addr: "127.0.0.1"},
		"no pid":         {addr: "127.0.0.1:1"},
	} {
		e := r.encode()
		_, good := decodeRootInfo(e[:])
		assert.False(t, good, name)
	}
	e := ok.encode()
	e[0] ^= 1
	_, good = decodeRootInfo(e[:])
	assert.False(t, good, "magic")
	_, good = decodeRootInfo(e[:100])
	assert.False(t, good, "short")
}

// TestValidSegName: a rank opens only names its world's rendezvous could
// have made for that rank.
func TestValidSegName(t *testing.T) {
	id := [16]byte{0xab, 0xcd, 1, 2, 3, 4, 5}
	require.True(t, validSegName(id, 3, segName(id, 3, 4242)))
	for _, bad := range []string{
		segName(id, 2, 4242), segName([16]byte{1}, 3, 4242), segName(id, 3, 4242) + "/x",
		"../" + segName(id, 3, 4242), segName(id, 3, 0), "hcclsim-abcd01020304-r3-p", "hcclsim-abcd01020304-r3-p../../etc",
		"hcclsim-abcd01020304-r3-p12345678", "hcclsim-abcd01020304-r3-p0012",
	} {
		assert.False(t, validSegName(id, 3, bad), bad)
	}
}

// TestSegmentFilesChecked: a peer's segment that is a symbolic link, a
// file others may open, or of the wrong size is refused; unlink removes
// only a regular file of this user and never follows a link.
func TestSegmentFilesChecked(t *testing.T) {
	dir := t.TempDir()
	lay := layoutFor(2, 64<<10)
	s, err := createSegment(dir, "own", lay)
	require.NoError(t, err)
	defer s.unmap()
	p, err := openSegment(dir, "own", lay)
	require.NoError(t, err)
	p.unmap()

	target := filepath.Join(t.TempDir(), "precious")
	require.NoError(t, os.WriteFile(target, make([]byte, lay.total), 0o600))
	require.NoError(t, os.Symlink(target, filepath.Join(dir, "link")))
	_, err = openSegment(dir, "link", lay)
	require.Error(t, err, "symbolic link")
	_, err = openSegment(dir, "../"+filepath.Base(dir)+"/own", lay)
	require.Error(t, err, "not a plain name")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "open"), make([]byte, lay.total), 0o644))
	_, err = openSegment(dir, "open", lay)
	require.ErrorContains(t, err, "lets others in")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "short"), make([]byte, 100), 0o600))
	_, err = openSegment(dir, "short", lay)
	require.Error(t, err, "size")

	unlinkSegment(dir, "link")
	unlinkSegment(dir, "../"+filepath.Base(filepath.Dir(target))+"/precious")
	_, err = os.Stat(target)
	require.NoError(t, err, "the link's target or a path outside dir was removed")
	unlinkSegment(dir, "own")
	_, err = os.Stat(filepath.Join(dir, "own"))
	require.True(t, os.IsNotExist(err))
}

// TestCheckDesc: shapes a peer may not send.
func TestCheckDesc(t *testing.T) {
	const n = 3
	ok := func() *opDesc {
		return &opDesc{Kind: kindAlltoAllV, DT: dtFP32, RecvDT: dtFP32, SendCounts: []uint64{1, 0, 2},
			SDispls: []uint64{0, 1 << 62, 1}, RecvCounts: []uint64{1, 1, 1}, RDispls: []uint64{0, 1, 2}}
	}
	require.NoError(t, checkDesc(ok(), n), "a zero count may have any displacement")
	require.NoError(t, checkDesc(&opDesc{Kind: kindBarrier}, n))
	require.NoError(t, checkDesc(&opDesc{Kind: kindAllReduce, Count: 5, DT: dtBF16, Op: opMax}, n))
	for name, d := range map[string]*opDesc{
		"nil":             nil,
		"kind":            {Kind: 99},
		"type":            {Kind: kindAllReduce, Count: 1, DT: 13},
		"op":              {Kind: kindAllReduce, Count: 1, DT: dtFP32, Op: 9},
		"root":            {Kind: kindBroadcast, Count: 1, DT: dtFP32, Root: n},
		"count":           {Kind: kindAllGather, Count: 1 << 60, DT: dtFP32},
		"short counts":    func() *opDesc { d := ok(); d.SendCounts = d.SendCounts[:2]; return d }(),
		"long displs":     func() *opDesc { d := ok(); d.RDispls = append(d.RDispls, 0); return d }(),
		"huge count":      func() *opDesc { d := ok(); d.RecvCounts[1] = 1 << 60; return d }(),
		"range overflows": func() *opDesc { d := ok(); d.SDispls[0] = maxDescElems; return d }(),
		"recv type":       func() *opDesc { d := ok(); d.RecvDT = 13; return d }(),
	} {
		assert.Error(t, checkDesc(d, n), name)
	}
}

// flakyListener fails its first Accept calls with a transient error.
type flakyListener struct {
	net.Listener
	fails atomic.Int32
}

func (l *flakyListener) Accept() (net.Conn, error) {
	if l.fails.Add(-1) >= 0 {
		return nil, errors.New("accept: too many open files")
	}
	return l.Listener.Accept()
}

// TestAcceptErrorsDoNotEndTheHub: transient Accept errors back off; the
// hub still admits a connection afterwards.
func TestAcceptErrorsDoNotEndTheHub(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ln := &flakyListener{Listener: inner}
	ln.fails.Store(3)
	h := newHub(newWorldID(), newSecret(), t.TempDir(), ln, 30*time.Second)
	defer func() { h.close(); <-h.done }()
	c, err := net.DialTimeout("tcp", h.addr(), 10*time.Second)
	require.NoError(t, err)
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	m, err := readFrame(c, maxHelloFrame)
	require.NoError(t, err, "no challenge after transient accept errors")
	require.Equal(t, mChallenge, m.Kind)
}
