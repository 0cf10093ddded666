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

// enabledMem is peer memory this rank enabled: enabling the same
// descriptor again counts up, and each DisableMemAccess counts down
// (hcomm legacy tree, one_sided_service/hccl_one_sided_conn.cc:259-271,
// 309-320: the remote buffer manager is reference-counted).
type enabledMem struct {
	info memDescInfo
	refs int
}

// oneSidedState is one rank's registrations, connections (peers it
// exchanged descriptors with), enabled peer memory and windows. Safe for
// concurrent use (mu).
type oneSidedState struct {
	mu      sync.Mutex
	nextID  uint64
	regs    map[uint64]*registration // mine, live, by id
	conns   map[int]bool             // peers an ExchangeMemDesc paired with
	enabled map[descKey]*enabledMem  // enabled by me
	windows map[uintptr]*window      // by handle: at most one (window.go)
	nextWin uintptr
	cclBuf  bool // a collective created the CCL buffer: no window any more (window.go)
}

func (s *oneSidedState) init() {
	s.regs = make(map[uint64]*registration)
	s.conns = make(map[int]bool)
	s.enabled = make(map[descKey]*enabledMem)
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

// connected reports whether an ExchangeMemDesc with peer paired (the
// device's one-sided connection to it exists).
func (s *oneSidedState) connected(peer int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns[peer]
}

// span is a registered range [addr, addr+size).
type span struct {
	addr uintptr
	size uint64
}

func (sp span) covers(addr uintptr, n uint64) bool {
	return addr >= sp.addr && uint64(addr-sp.addr) <= sp.size && n <= sp.size-uint64(addr-sp.addr)
}

// spansFor appends this rank's live registrations for requester to dst
// (the owner side of the call-time check, taken once per batch).
func (s *oneSidedState) spansFor(dst []span, requester int) []span {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.regs {
		if r.info.peer == requester {
			dst = append(dst, span{r.info.addr, r.info.size})
		}
	}
	return dst
}

// within reports whether [addr, addr+n) lies inside one of spans. *hint
// is the span the last range hit, tried first, and is moved to this one.
func within(spans []span, hint *int, addr uintptr, n uint64) bool {
	if *hint < len(spans) && spans[*hint].covers(addr, n) {
		return true
	}
	for i, sp := range spans {
		if sp.covers(addr, n) {
			*hint = i
			return true
		}
	}
	return false
}

// coveredBy fails with HCCL_E_REMOTE unless [addr, addr+n) lies inside one
// of spans (memory the owner still has registered for the requester).
func coveredBy(spans []span, hint *int, owner int, addr uintptr, n uint64) error {
	if within(spans, hint, addr, n) {
		return nil
	}
	return errf(codeRemote, "rank %d no longer has [%#x, +%d) registered for this rank", owner, addr, n)
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
	hint      int // the registration the last range fell in, tried first
}

// resolver fills rs (reused by its caller) for requester.
func (s *oneSidedState) resolver(rs *resolver, c *comm, requester int) *resolver {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(rs.regs)
	clear(rs.views)
	rs.c, rs.requester, rs.regs, rs.views, rs.hint = c, requester, rs.regs[:0], rs.views[:0], 0
	for _, r := range s.regs {
		if r.info.peer == requester {
			rs.regs = append(rs.regs, r)
			rs.views = append(rs.views, nil)
		}
	}
	return rs
}

// resolve returns the bytes of [addr, addr+n): they must lie in a live
// registration for the requester; memory deregistered after the peer
// enabled it is an error completion (HCCL_E_REMOTE).
func (rs *resolver) resolve(addr uintptr, n uint64) ([]byte, error) {
	if i := rs.hint; i < len(rs.regs) && rs.views[i] != nil {
		if r := rs.regs[i]; (span{r.info.addr, r.info.size}).covers(addr, n) {
			off := uint64(addr - r.info.addr)
			return rs.views[i][off : off+n], nil
		}
	}
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
		rs.hint = i
		off := uint64(addr - r.info.addr)
		return rs.views[i][off : off+n], nil
	}
	return nil, errf(codeRemote, "rank %d: [%#x, +%d) is not registered for rank %d (deregistered?)", rs.c.rank, addr, n, rs.requester)
}

// enabledSpans appends to dst the memory of peer this rank enabled, for
// checkEnabled: collected once per batch, since a batch's descriptors
// come by the hundred and a map walk per descriptor cost more than the
// copy of a small row. Called with s.mu held.
func (s *oneSidedState) enabledSpans(dst []span, peer int) []span {
	for k, m := range s.enabled {
		if k.owner == peer {
			dst = append(dst, span{m.info.addr, m.info.size})
		}
	}
	return dst
}

// checkEnabled is the requester side of one descriptor, as the device's
// BatchRead/BatchWrite makes it (hccl_one_sided_conn.cc:343-346,
// 372-375): [addr, addr+n) must lie inside memory of peer this rank
// enabled (en, from enabledSpans); anything else (not enabled, or running
// past its end) is HCCL_E_INTERNAL. *hint as for within.
func checkEnabled(en []span, hint *int, peer int, addr uintptr, n uint64) error {
	if within(en, hint, addr, n) {
		return nil
	}
	return errf(codeInternal, "remote range [%#x, +%d) is not inside memory rank %d registered for this rank and this rank enabled", addr, n, peer)
}

func le64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

func leU64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }
