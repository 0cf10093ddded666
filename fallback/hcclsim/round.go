package hcclsim

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ascend-go/cann/internal/osthread"
)

// One rendezvous per collective of in-process ranks.
//
// The data phase of a collective meets once: every rank's stream task
// deposits its descriptor and buffer views in the round of the collective's
// sequence number, and the last to arrive checks that the descriptors agree.
// A small collective (every rank's buffers ≤ smallRound bytes) is then moved
// entirely by that last arriver, which releases the others when done: one
// rendezvous, no second barrier. A large one is split across the ranks as
// before (each writes only its own share) and the round's second phase holds
// every rank until all shares are done, since the others read and write its
// buffers until then.
//
// A waiting rank polls for a bounded time, yielding the processor between
// polls (ranks are goroutines and may outnumber the cores), before it parks
// on its communicator's wake channel: ranks that arrive within microseconds
// of each other pay no sleep and wake-up, and an idle rank burns no core.
// Nothing is allocated per round and no timer is armed unless a rank parks;
// the deadline (the exec timeout from the round's first arrival) is checked
// once per park.

const (
	// roundRing is how many rounds a world keeps. A rank enters round s+1
	// only after round s released it, and round s+1 cannot complete before
	// every rank has left round s, so two would do; the spare slots keep a
	// late rank's view of an abandoned round (a tombstone) a while longer.
	roundRing = 8
	// smallRound bounds the bytes per rank buffer that the last arriver
	// moves alone (a few microseconds of copying or reducing).
	smallRound = 64 << 10
	// roundSpin is how long a rank polls before it parks.
	roundSpin = 50 * time.Microsecond
)

// Phases of a round, in order; a waiter waits for a phase or a later one.
const (
	roundCollecting uint32 = iota // ranks arriving
	roundArrived                  // every rank in; a large round's shares are being moved
	roundDone                     // the data has moved (or the round failed on arrival)
	roundAbandoned                // a rank did not arrive (or finish) before the deadline
)

// round is the rendezvous of one collective's data phase. Fields other than
// phase are guarded by roundTable.mu; phase is also read without it while
// polling (it is stored after the fields it publishes).
type round struct {
	seq      uint64
	live     bool
	need     int
	arrived  int
	finished int // large rounds: ranks done with their share
	left     int // ranks done with the round (the slot is free when all have)
	deadline time.Time
	phase    atomic.Uint32

	ds     []*opDesc
	bufs   []opBufs
	wakes  []chan struct{}
	parked []bool

	// Published with roundArrived or roundDone.
	small   bool
	verdict error // the descriptors disagree (HCCL_E_PARA on every rank)
	bad     int   // the first rank whose buffers could not be taken, or -1
	fault   error // the data movement panicked (a bug)

	srcs, dsts [][]byte // the last arriver's scratch
}

// roundParks counts the times a rank slept in a round (each a wake-up of
// its thread later), for the small-collective benchmark.
var roundParks atomic.Uint64

// roundTable holds the rounds of one in-process world.
type roundTable struct {
	mu     sync.Mutex
	rounds [roundRing]round
	linked atomic.Int32 // ranks whose links are built (roundTransport.rankLinked)
}

// rankWaiter is what a rank parks on: a wake channel the releasing rank
// signals without blocking, and a timer reused from park to park.
type rankWaiter struct {
	wake  chan struct{}
	timer *time.Timer
}

func newRankWaiter() *rankWaiter {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &rankWaiter{wake: make(chan struct{}, 1), timer: t}
}

// roundTransport is a transport whose collectives meet once on the streams:
// round replaces collect, agreement and the data phase's meetings. It
// returns the descriptors' disagreement as verdict (every rank gets the
// same), and any other failure as err.
type roundTransport interface {
	round(c *comm, seq uint64, d *opDesc, bufs opBufs, timeout time.Duration) (verdict, err error)
	// rankLinked counts a rank whose first operation built its links (once
	// per rank); allLinked reports whether every rank has. Only a first
	// operation waits at its call for the others' descriptors, so from
	// then on a collective's call need not post its descriptor: the round
	// agrees the descriptors on the streams.
	rankLinked()
	allLinked() bool
	// settle consumes a posted descriptor the round made redundant. met:
	// the round completed with every rank, so no rank waits at its call
	// for this collective's descriptors (that wait precedes its stream
	// task) and a rank that did not post never will.
	settle(c *comm, t ticket, met bool)
}

// slot returns the round of seq, claiming the slot if this rank is the
// first to arrive; t.mu held.
func (t *roundTable) slot(seq uint64, n int, timeout time.Duration) (*round, error) {
	rd := &t.rounds[seq%roundRing]
	if rd.live && rd.seq == seq {
		return rd, nil
	}
	if rd.live && rd.seq > seq {
		return nil, errf(codeTimeout, "the other ranks gave up on this collective's data phase before this rank arrived")
	}
	if rd.live && rd.left < rd.need && rd.phase.Load() != roundAbandoned {
		return nil, errf(codeInternal, "collective %d reached the streams before collective %d ended", seq, rd.seq)
	}
	rd.seq, rd.live, rd.need = seq, true, n
	rd.arrived, rd.finished, rd.left = 0, 0, 0
	rd.deadline = time.Now().Add(timeout)
	rd.small, rd.verdict, rd.bad, rd.fault = false, nil, -1, nil
	if len(rd.ds) != n {
		rd.ds, rd.bufs = make([]*opDesc, n), make([]opBufs, n)
		rd.wakes, rd.parked = make([]chan struct{}, n), make([]bool, n)
		rd.srcs, rd.dsts = make([][]byte, n), make([][]byte, n)
	}
	clear(rd.ds)
	clear(rd.bufs)
	clear(rd.wakes)
	clear(rd.parked)
	rd.phase.Store(roundCollecting)
	return rd, nil
}

func (w *localWorld) rankLinked()     { w.rounds.linked.Add(1) }
func (w *localWorld) allLinked() bool { return int(w.rounds.linked.Load()) == w.n }

func (w *localWorld) settle(c *comm, t ticket, met bool) {
	switch {
	case t.mt == nil:
	case met:
		// A rank that found every rank linked at its call did not post:
		// the post of a rank that linked before it is garbage.
		w.place.forget(allKey(meetJoin, t.seq), t.mt, c.rank)
	default:
		_, _ = w.place.await(allKey(meetJoin, t.seq), t.mt, c.stop)
	}
}

// round is roundTransport.round for ranks in this process.
func (w *localWorld) round(c *comm, seq uint64, d *opDesc, bufs opBufs, timeout time.Duration) (error, error) {
	t, r := &w.rounds, c.rank
	t.mu.Lock()
	rd, err := t.slot(seq, w.n, timeout)
	if err != nil {
		t.mu.Unlock()
		return nil, err
	}
	if rd.phase.Load() == roundAbandoned {
		rd.left++
		t.mu.Unlock()
		return nil, errf(codeTimeout, "the other ranks gave up on this collective's data phase before this rank arrived")
	}
	if c.waiter == nil {
		c.waiter = newRankWaiter() // data phases of a rank are serialised (execMu)
	}
	rd.ds[r], rd.bufs[r], rd.wakes[r] = d, bufs, c.waiter.wake
	rd.arrived++
	last := rd.arrived == rd.need
	if last {
		rd.verdict = agree(rd.ds)
		for k, b := range rd.bufs {
			if b.err != nil {
				rd.bad = k
				break
			}
		}
		moves := rd.verdict == nil && rd.bad < 0 && d.Kind != kindBarrier
		rd.small = moves && smallBufs(rd.bufs)
		switch {
		case !moves:
			w.release(rd, roundDone) // nothing to move: the outcome is known
		case rd.small:
			// This rank moves it all, below; the others wait for roundDone.
		default:
			w.release(rd, roundArrived)
		}
	}
	t.mu.Unlock()

	if last && rd.small {
		rd.fault = moveAll(c.reducer(), rd)
		t.mu.Lock()
		w.release(rd, roundDone)
		t.mu.Unlock()
	} else if err := w.await(c, rd, roundArrived); err != nil {
		return nil, err
	}
	// Every rank arrived: for a small round the data has moved.

	if err := rd.outcome(r); err != nil || rd.small || rd.phase.Load() == roundDone {
		w.leave(rd)
		return rd.verdict, err
	}

	// A large round: move this rank's share, then wait for the others'.
	localCompute(c.reducer(), r, rd.ds[r], rd.ds, rd.bufs, nil)
	t.mu.Lock()
	if rd.finished++; rd.finished == 1 {
		// The wait for the shares runs from the first one done, as a
		// barrier after the data phase would.
		rd.deadline = time.Now().Add(timeout)
	}
	if rd.finished == rd.need && rd.phase.Load() == roundArrived {
		w.release(rd, roundDone)
	}
	t.mu.Unlock()
	if err := w.await(c, rd, roundDone); err != nil {
		return nil, err
	}
	w.leave(rd)
	return nil, nil
}

// smallBufs reports whether the last arriver moves the round alone.
func smallBufs(bs []opBufs) bool {
	for _, b := range bs {
		if len(b.send) > smallRound || len(b.recv) > smallRound {
			return false
		}
	}
	return true
}

// outcome is rank r's result of a round that every rank reached: the
// descriptors' disagreement is the caller's (returned as verdict), a rank
// that could not take its views stops everyone before any memory is
// touched.
func (rd *round) outcome(r int) error {
	switch {
	case rd.verdict != nil:
		return nil
	case rd.bad == r:
		return rd.bufs[r].err
	case rd.bad >= 0:
		return errf(codeRemote, "rank %d failed: %v", rd.bad, rd.bufs[rd.bad].err)
	case rd.fault != nil:
		return rd.fault
	}
	return nil
}

// release moves rd to phase p and wakes the parked ranks; roundTable.mu held.
func (w *localWorld) release(rd *round, p uint32) {
	rd.phase.Store(p)
	for k, parked := range rd.parked {
		if parked {
			rd.parked[k] = false
			select {
			case rd.wakes[k] <- struct{}{}:
			default:
			}
		}
	}
}

// leave marks this rank done with rd, freeing the slot once all are.
func (w *localWorld) leave(rd *round) {
	w.rounds.mu.Lock()
	rd.left++
	w.rounds.mu.Unlock()
}

// await waits until rd reaches phase want (or a later one): it polls for
// roundSpin, then parks until released, the deadline or c's destruction.
// A rank that waits past the deadline for ranks that have not arrived (or,
// in a large round, finished) abandons the round for everyone.
func (w *localWorld) await(c *comm, rd *round, want uint32) error {
	var start time.Time
	yield, budget := runtime.Gosched, roundSpin
	if w.n <= runtime.GOMAXPROCS(0) {
		// Every rank can hold a processor: keep it while polling. The
		// waiter is often a synchronizing caller locked to its OS thread
		// (the stream task runs inline), whose Gosched would cost two
		// thread hand-offs per poll (osthread.Yield).
		yield = osthread.Yield
	}
	for i := 0; rd.phase.Load() < want; i++ {
		if i&15 == 0 {
			if i == 0 {
				start = time.Now()
			} else if time.Since(start) > budget {
				if err := w.park(c, rd, want); err != nil {
					return err
				}
				break
			}
		}
		yield()
	}
	if rd.phase.Load() == roundAbandoned {
		w.rounds.mu.Lock()
		defer w.rounds.mu.Unlock()
		rd.left++
		if want == roundArrived {
			return errf(codeTimeout, "%d of %d ranks did not reach the collective's data phase in time", rd.need-rd.arrived, rd.need)
		}
		return errf(codeTimeout, "%d of %d ranks did not finish their share of the collective in time", rd.need-rd.finished, rd.need)
	}
	return nil
}

// park is await past its polling: it sleeps on c's wake channel, armed
// with the round's deadline. Spurious wake-ups (a token left by an earlier
// round) only cost a re-check.
func (w *localWorld) park(c *comm, rd *round, want uint32) error {
	t, r, wt := &w.rounds, c.rank, c.waiter
	for {
		t.mu.Lock()
		if rd.phase.Load() >= want {
			t.mu.Unlock()
			return nil
		}
		wait := time.Until(rd.deadline)
		if wait <= 0 {
			if rd.arrived == rd.need && rd.small {
				// The last arriver is moving the data: it ends soon.
				rd.deadline = time.Now().Add(queuePoll)
				wait = queuePoll
			} else {
				w.release(rd, roundAbandoned)
				t.mu.Unlock()
				return nil
			}
		}
		rd.parked[r] = true
		t.mu.Unlock()
		roundParks.Add(1)
		wt.timer.Reset(wait)
		stopped := false
		select {
		case <-wt.wake:
		case <-wt.timer.C:
		case <-c.stop:
			stopped = true
		}
		wt.timer.Stop()
		if stopped {
			t.mu.Lock()
			defer t.mu.Unlock()
			rd.parked[r] = false
			if rd.phase.Load() >= want {
				return nil
			}
			if rd.phase.Load() == roundCollecting {
				// Withdraw: the others wait out the deadline as for a rank that never came.
				rd.arrived--
				rd.ds[r], rd.bufs[r] = nil, opBufs{}
			}
			rd.left++
			return errf(codePara, "communicator destroyed while waiting at the collective's data phase")
		}
	}
}

// moveAll is the data movement of a small round by its last arriver: every
// rank's share, one after the other. A panic (a bug) becomes the round's
// error for every rank.
func moveAll(red *reducer, rd *round) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = errf(codeInternal, "data phase panicked: %v", p)
		}
	}()
	d := rd.ds[0]
	if d.Kind == kindAllReduce {
		// One pass over the whole range writes every rank's output.
		esz := d.DT.size()
		for k, b := range rd.bufs {
			rd.srcs[k] = b.send[:d.Count*esz]
			rd.dsts[k] = b.recv[:d.Count*esz]
		}
		red.reduceBlocks(d.DT, d.Op, rd.dsts, rd.srcs)
		clear(rd.srcs)
		clear(rd.dsts)
		return nil
	}
	for k := range rd.bufs {
		localCompute(red, k, rd.ds[k], rd.ds, rd.bufs, rd.srcs)
	}
	clear(rd.srcs)
	return nil
}
