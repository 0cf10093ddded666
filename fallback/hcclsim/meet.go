package hcclsim

import (
	"sync"
	"time"
)

// meetKey names one rendezvous of in-process ranks: a kind of meeting, a
// sequence number, and for pairwise meetings the two ranks (lo < hi; both
// -1 for a meeting of all ranks).
type meetKey struct {
	kind   uint8
	seq    uint64
	lo, hi int32
}

const (
	meetJoin   uint8 = iota // call-time agreement of a collective
	meetStart               // a collective's data phase: every stream reached it
	meetEnd                 // a collective's data phase: every rank is done
	meetP2P                 // a send/recv pair on the streams
	meetP2PEnd              // the receiver has copied
	meetXchg                // ExchangeMemDesc between two ranks
	meetWin                 // CommExchangeMem
)

// meeting collects one value per participant; done closes when all are in.
type meeting struct {
	vals []any
	got  int
	left int
	done chan struct{}
}

// meetingPlace is the rendezvous of the ranks of one in-process world. It
// is safe for concurrent use. Once aborted, every pending and later meet
// fails with the abort error: a rank that timed out leaves the others no
// consistent way to continue, as on the device.
type meetingPlace struct {
	mu       sync.Mutex
	open     map[meetKey]*meeting
	abortErr error
	aborted  chan struct{}
}

func newMeetingPlace() *meetingPlace {
	return &meetingPlace{open: make(map[meetKey]*meeting), aborted: make(chan struct{})}
}

// meet deposits v as participant slot of a meeting of need participants,
// waits for the others and returns all values by slot. It fails with
// HCCL_E_TIMEOUT at the deadline, or with the abort error.
func (m *meetingPlace) meet(k meetKey, slot, need int, v any, deadline time.Time) ([]any, error) {
	mt, err := m.enter(k, slot, need, v)
	if err != nil {
		return nil, err
	}
	return m.await(k, mt, need, deadline)
}

// enter deposits v without waiting, so that one rank can take part in
// several meetings at once (BatchSendRecv); await then waits for each.
func (m *meetingPlace) enter(k meetKey, slot, need int, v any) (*meeting, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.abortErr != nil {
		return nil, m.abortErr
	}
	mt := m.open[k]
	if mt == nil {
		mt = &meeting{vals: make([]any, need), done: make(chan struct{})}
		m.open[k] = mt
	}
	mt.vals[slot] = v
	mt.got++
	if mt.got == need {
		close(mt.done)
	}
	return mt, nil
}

// await waits until every participant of mt has entered.
func (m *meetingPlace) await(k meetKey, mt *meeting, need int, deadline time.Time) ([]any, error) {
	select {
	case <-mt.done:
	default:
		timer := time.NewTimer(time.Until(deadline))
		defer timer.Stop()
		select {
		case <-mt.done:
		case <-m.aborted:
			return nil, m.err()
		case <-timer.C:
			// Arrival may have completed in the same instant; prefer success.
			select {
			case <-mt.done:
			default:
				return nil, errf(codeTimeout, "timed out waiting for %d of %d ranks (%s)", need-mt.arrived(m), need, k.describe())
			}
		}
	}
	m.mu.Lock()
	mt.left++
	if mt.left == need && m.open[k] == mt {
		delete(m.open, k)
	}
	m.mu.Unlock()
	return mt.vals, nil
}

func (mt *meeting) arrived(m *meetingPlace) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return mt.got
}

func (m *meetingPlace) err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.abortErr
}

// abort fails every pending and later meeting with err (first call wins).
func (m *meetingPlace) abort(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.abortErr == nil {
		m.abortErr = err
		m.open = make(map[meetKey]*meeting) // waiters keep their own reference
		close(m.aborted)
	}
}

func (k meetKey) describe() string {
	names := [...]string{"collective call", "collective start", "collective end", "send/recv", "send/recv end",
		"memory descriptor exchange", "window exchange"}
	n := "meeting"
	if int(k.kind) < len(names) {
		n = names[k.kind]
	}
	return n
}
