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

// find returns the live registration for requester covering [addr,
// addr+n), or nil.
func (s *oneSidedState) find(requester int, addr uintptr, n uint64) *registration {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.regs {
		if r.info.peer == requester && addr >= r.info.addr && uint64(addr-r.info.addr) <= r.info.size &&
			n <= r.info.size-uint64(addr-r.info.addr) {
			return r
		}
	}
	return nil
}

// covers is the owner-side check made at the requester's call.
func (s *oneSidedState) covers(requester int, addr uintptr, n uint64) error {
	if s.find(requester, addr, n) == nil {
		return errf(codeRemote, "[%#x, +%d) is no longer registered for rank %d", addr, n, requester)
	}
	return nil
}

// resolve is the owner side of a transfer: [addr, addr+n) must lie in a
// live registration of c for requester; it returns the bytes. Memory
// deregistered after the peer enabled it is an error completion
// (HCCL_E_REMOTE).
func (s *oneSidedState) resolve(c *comm, requester int, addr uintptr, n uint64) ([]byte, error) {
	hit := s.find(requester, addr, n)
	if hit == nil {
		return nil, errf(codeRemote, "rank %d: [%#x, +%d) is not registered for rank %d (deregistered?)", c.rank, addr, n, requester)
	}
	if n == 0 {
		return nil, nil
	}
	b, err := c.sim.env.view(c.dev, hit.kind, ptrOf(addr), n)
	if err != nil {
		return nil, errf(codeRemote, "rank %d: registered memory [%#x, +%d) is gone: %v", c.rank, addr, n, err)
	}
	return b, nil
}

// checkRemote is the requester side of a transfer: the remote range must
// lie inside memory of peer that this rank enabled.
func (s *oneSidedState) checkRemote(peer int, addr uintptr, n uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, m := range s.enabled {
		if k.owner != peer || addr < m.addr || uint64(addr-m.addr) >= m.size && !(m.size == 0 && addr == m.addr) {
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
