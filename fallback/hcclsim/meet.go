package hcclsim

import (
	"sync"
	"time"
)

// meetKey names one rendezvous of in-process ranks: a kind of meeting, a
// sequence number, and for pairwise meetings the two ranks (both -1 for a
// meeting of all ranks).
type meetKey struct {
	kind   uint8
	seq    uint64
	lo, hi int32
}

const (
	meetJoin   uint8 = iota // call-time agreement of a collective
	meetStart               // a data phase: every stream reached it
	meetEnd                 // a data phase: every rank is done
	meetP2P                 // a send/recv pair on the streams
	meetP2PEnd              // the receiver has copied
	meetXchg                // ExchangeMemDesc between two ranks
	meetWin                 // CommExchangeMem between two ranks
)

// meeting collects one value per participant. It ends either complete
// (every participant in) or abandoned (its deadline passed first); the
// verdict is taken under the place's lock, so every participant sees the
// same one.
type meeting struct {
	vals      []any
	need      int
	got       int
	touched   int // participants that have entered and left, or arrived late
	deadline  time.Time
	done      chan struct{} // closed when complete or abandoned
	abandoned bool
}

// meetingPlace is the rendezvous of the ranks of one in-process world.
// Safe for concurrent use. An abandoned meeting stays as a tombstone until
// every participant has touched it, so a rank arriving late learns at once
// that the others gave up (HCCL_E_TIMEOUT) and the ranks stay in step.
// Every wait is bounded by its meeting's deadline, so nothing needs to
// abort the place when a rank leaves.
type meetingPlace struct {
	mu   sync.Mutex
	open map[meetKey]*meeting
}

func newMeetingPlace() *meetingPlace {
	return &meetingPlace{open: make(map[meetKey]*meeting)}
}

// meet deposits v as participant slot of a meeting of need participants,
// waits for the others (at most timeout from the meeting's first arrival,
// or until stop is closed) and returns all values by slot.
func (m *meetingPlace) meet(k meetKey, slot, need int, v any, timeout time.Duration, stop <-chan struct{}) ([]any, error) {
	mt, err := m.enter(k, slot, need, v, timeout)
	if err != nil {
		return nil, err
	}
	return m.await(k, mt, stop)
}

// enter deposits v without waiting, so one rank can take part in several
// meetings at once; await then waits for each.
func (m *meetingPlace) enter(k meetKey, slot, need int, v any, timeout time.Duration) (*meeting, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	mt := m.open[k]
	if mt == nil {
		mt = &meeting{vals: make([]any, need), need: need, deadline: time.Now().Add(timeout), done: make(chan struct{})}
		m.open[k] = mt
	}
	if mt.abandoned {
		m.touch(k, mt)
		return nil, errf(codeTimeout, "the other ranks gave up on this %s before this rank arrived", k.describe())
	}
	mt.vals[slot] = v
	mt.got++
	if mt.got == need {
		close(mt.done)
	}
	return mt, nil
}

// touch counts a participant done with mt and drops the meeting when all
// are; m.mu held.
func (m *meetingPlace) touch(k meetKey, mt *meeting) {
	mt.touched++
	if mt.touched == mt.need && m.open[k] == mt {
		delete(m.open, k)
	}
}

// await waits until mt is complete or abandoned, or stop is closed (the
// participant's communicator is being destroyed: it leaves, and the others
// wait out the deadline as for a rank that never came).
func (m *meetingPlace) await(k meetKey, mt *meeting, stop <-chan struct{}) ([]any, error) {
	stopped := false
	select {
	case <-mt.done:
	default:
		timer := time.NewTimer(time.Until(mt.deadline))
		select {
		case <-mt.done:
		case <-timer.C:
		case <-stop:
			stopped = true
		}
		timer.Stop()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if stopped && mt.got < mt.need && !mt.abandoned {
		m.touch(k, mt)
		return nil, errf(codePara, "communicator destroyed while waiting at the %s", k.describe())
	}
	if mt.got < mt.need && !mt.abandoned {
		mt.abandoned = true
		close(mt.done)
	}
	m.touch(k, mt)
	if mt.abandoned {
		return nil, errf(codeTimeout, "%d of %d ranks did not arrive at the %s in time", mt.need-mt.got, mt.need, k.describe())
	}
	return mt.vals, nil
}

// forget is a participant's exit from a meeting it no longer needs
// without waiting: one that ended (complete or abandoned) counts it as
// touched, as await would; one still collecting, which the caller knows
// no participant waits for or can complete any more, loses the
// participant's value and goes once no value is left.
func (m *meetingPlace) forget(k meetKey, mt *meeting, slot int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if mt.got == mt.need || mt.abandoned {
		m.touch(k, mt)
		return
	}
	mt.vals[slot] = nil
	mt.got--
	if mt.got == 0 && mt.touched == 0 && m.open[k] == mt {
		delete(m.open, k)
	}
}

func (k meetKey) describe() string {
	names := [...]string{"collective call", "collective's start on the streams", "collective's end on the streams",
		"send/recv on the streams", "send/recv completion", "memory descriptor exchange", "window exchange"}
	if int(k.kind) < len(names) {
		return names[k.kind]
	}
	return "meeting"
}
