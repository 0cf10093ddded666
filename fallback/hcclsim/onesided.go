package hcclsim

import (
	"bytes"
	"encoding/binary"
	"sync"
	"unsafe"
)

// One-sided memory: a rank registers memory for one peer and gets a
// descriptor; the two exchange descriptors; the peer enables access and
// then reads (BatchGet) or writes (BatchPut) the memory without the owner
// calling anything. The checks follow docs/misuse.md, section HCCL.

// memDescMagic opens every descriptor this simulator writes.
var memDescMagic = [8]byte{'H', 'C', 'S', 'I', 'M', 'M', 'D', '1'}

// memDescInfo is the content of a descriptor: who registered what for whom.
type memDescInfo struct {
	world [16]byte
	owner int // the registering rank
	peer  int // the rank allowed to access
	id    uint64
	typ   int32 // hccl.MemType
	addr  uintptr
	size  uint64
}

// descKey identifies a registration across the world.
type descKey struct {
	owner int
	id    uint64
}

func (m memDescInfo) key() descKey { return descKey{m.owner, m.id} }

// encode lays the descriptor out in the 512 opaque bytes of an HcclMemDesc.
func (m memDescInfo) encode() (d [512]byte) {
	copy(d[0:8], memDescMagic[:])
	copy(d[8:24], m.world[:])
	le := binary.LittleEndian
	le.PutUint32(d[24:], uint32(m.owner))
	le.PutUint32(d[28:], uint32(m.peer))
	le.PutUint64(d[32:], m.id)
	le.PutUint32(d[40:], uint32(m.typ))
	le.PutUint64(d[48:], uint64(m.addr))
	le.PutUint64(d[56:], m.size)
	return d
}

// decodeMemDesc parses bytes written by encode; ok is false for anything
// else.
func decodeMemDesc(d []byte) (m memDescInfo, ok bool) {
	if len(d) < 64 || !bytes.Equal(d[0:8], memDescMagic[:]) {
		return m, false
	}
	copy(m.world[:], d[8:24])
	le := binary.LittleEndian
	m.owner = int(le.Uint32(d[24:]))
	m.peer = int(le.Uint32(d[28:]))
	m.id = le.Uint64(d[32:])
	m.typ = int32(le.Uint32(d[40:]))
	m.addr = uintptr(le.Uint64(d[48:]))
	m.size = le.Uint64(d[56:])
	return m, true
}

// registration is memory this rank registered.
type registration struct {
	info memDescInfo
	kind memKind
}

// window is a buffer registered with CommRegister.
type window struct {
	addr  unsafe.Pointer
	size  uint64
	peers map[int][2]uint64 // peer → its window (addr, size) after CommExchangeMem
}

// oneSidedState is one rank's registrations, received and enabled peer
// descriptors, and windows. Safe for concurrent use (mu).
type oneSidedState struct {
	mu       sync.Mutex
	nextID   uint64
	regs     map[uint64]*registration // mine, live, by id
	received map[descKey]memDescInfo  // sent to me by ExchangeMemDesc
	enabled  map[descKey]memDescInfo  // enabled by me
	windows  map[uintptr]*window      // by handle
	nextWin  uintptr
}

func (s *oneSidedState) init() {
	s.regs = make(map[uint64]*registration)
	s.received = make(map[descKey]memDescInfo)
	s.enabled = make(map[descKey]memDescInfo)
	s.windows = make(map[uintptr]*window)
}

// live counts what the state holds, for leak checks.
func (s *oneSidedState) live() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.regs) + len(s.enabled) + len(s.windows)
}

// clear drops everything (CommDestroy).
func (s *oneSidedState) clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
}

// registered reports whether registration id of this rank is live (the
// owner side of EnableMemAccess's check).
func (s *oneSidedState) registered(id uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.regs[id]
	return ok
}

// span is a registered range [addr, addr+size).
type span struct {
	addr uintptr
	size uint64
}

func (sp span) covers(addr uintptr, n uint64) bool {
	return addr >= sp.addr && uint64(addr-sp.addr) <= sp.size && n <= sp.size-uint64(addr-sp.addr)
}

// anyPeer stands for every requester in spansFor and resolver: the rank
// itself reaches all of its own registrations, whatever peer they name.
const anyPeer = -1

// spansFor lists this rank's live registrations for requester (the owner
// side of the call-time check, taken once per batch); anyPeer lists all.
func (s *oneSidedState) spansFor(requester int) []span {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []span
	for _, r := range s.regs {
		if requester == anyPeer || r.info.peer == requester {
			out = append(out, span{r.info.addr, r.info.size})
		}
	}
	return out
}

// coveredBy fails with HCCL_E_REMOTE unless [addr, addr+n) lies inside one
// of spans (memory the owner still has registered for the requester).
func coveredBy(spans []span, owner int, addr uintptr, n uint64) error {
	for _, sp := range spans {
		if sp.covers(addr, n) {
			return nil
		}
	}
	return errf(codeRemote, "rank %d no longer has [%#x, +%d) registered for this rank", owner, addr, n)
}

// checkOwn is the call-time check of a transfer addressed to the caller's
// own rank: [addr, addr+n) must lie inside memory the rank registered on
// this communicator (for any peer; one's own memory needs no exchange or
// enable). spans is spansFor(anyPeer).
func checkOwn(spans []span, rank int, addr uintptr, n uint64) error {
	inside := false
	for _, sp := range spans {
		if sp.covers(addr, n) {
			return nil
		}
		inside = inside || addr >= sp.addr && uint64(addr-sp.addr) < sp.size
	}
	if inside {
		return errf(codePara, "range [%#x, +%d) runs past the end of rank %d's registered memory", addr, n, rank)
	}
	return errf(codeNotFound, "address %#x is not in memory rank %d registered on this communicator", addr, rank)
}

// resolver is the owner side of one batch of transfers: it looks up the
// registrations for the requester once and takes one view per
// registration, however many descriptors fall into it. Not safe for
// concurrent use.
type resolver struct {
	c         *comm
	requester int
	regs      []*registration
	views     [][]byte
}

func (s *oneSidedState) resolver(c *comm, requester int) *resolver {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs := &resolver{c: c, requester: requester}
	for _, r := range s.regs {
		if requester == anyPeer || r.info.peer == requester {
			rs.regs = append(rs.regs, r)
		}
	}
	rs.views = make([][]byte, len(rs.regs))
	return rs
}

// resolve returns the bytes of [addr, addr+n): they must lie in a live
// registration for the requester; memory deregistered after the peer
// enabled it is an error completion (HCCL_E_REMOTE).
func (rs *resolver) resolve(addr uintptr, n uint64) ([]byte, error) {
	for i, r := range rs.regs {
		sp := span{r.info.addr, r.info.size}
		if !sp.covers(addr, n) {
			continue
		}
		if rs.views[i] == nil {
			v, err := rs.c.sim.env.view(rs.c.dev, r.kind, ptrOf(r.info.addr), r.info.size)
			if err != nil {
				return nil, errf(codeRemote, "rank %d: registered memory [%#x, +%d) is gone: %v", rs.c.rank, r.info.addr, r.info.size, err)
			}
			rs.views[i] = v
		}
		off := uint64(addr - r.info.addr)
		return rs.views[i][off : off+n], nil
	}
	if rs.requester == anyPeer {
		return nil, errf(codeRemote, "rank %d: own memory [%#x, +%d) is no longer registered", rs.c.rank, addr, n)
	}
	return nil, errf(codeRemote, "rank %d: [%#x, +%d) is not registered for rank %d (deregistered?)", rs.c.rank, addr, n, rs.requester)
}

// enabledFor lists the peer memory this rank enabled from peer.
func (s *oneSidedState) enabledFor(peer int) []memDescInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []memDescInfo
	for k, m := range s.enabled {
		if k.owner == peer {
			out = append(out, m)
		}
	}
	return out
}

// checkRemote is the requester side of a transfer: the remote range must
// lie inside memory of the peer this rank enabled (enabled is enabledFor).
func checkRemote(enabled []memDescInfo, peer int, addr uintptr, n uint64) error {
	for _, m := range enabled {
		if addr < m.addr || uint64(addr-m.addr) >= m.size && !(m.size == 0 && addr == m.addr) {
			continue
		}
		if n > m.size-uint64(addr-m.addr) {
			return errf(codePara, "remote range [%#x, +%d) runs past the end of rank %d's memory [%#x, +%d)",
				addr, n, peer, m.addr, m.size)
		}
		return nil
	}
	return errf(codeNotFound, "remote address %#x is not in memory rank %d registered, exchanged and enabled for this rank", addr, peer)
}

func le64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

func leU64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }
