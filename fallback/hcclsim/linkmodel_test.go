package hcclsim

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// fakeClock is a clock the model waits on without sleeping.
type fakeClock struct {
	mu    sync.Mutex
	t     time.Time
	waits []time.Duration
}

func (f *fakeClock) now() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.t }
func (f *fakeClock) wait(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.waits = append(f.waits, d)
}

func TestLinkModelCost(t *testing.T) {
	m := &LinkModel{Latency: 3 * time.Microsecond, Bandwidth: 1e9, InFlight: 4}
	assert.Equal(t, 3*time.Microsecond+time.Microsecond, m.cost(1, 1000))
	assert.Equal(t, 2*3*time.Microsecond+5*time.Microsecond, m.cost(5, 5000))
	assert.Equal(t, 3*3*time.Microsecond, m.cost(9, 0))
	d := &LinkModel{Latency: time.Microsecond, Bandwidth: 1e9}
	assert.Equal(t, time.Microsecond, d.cost(256, 0), "InFlight 0: the whole batch in flight, one round trip")
	assert.Equal(t, time.Microsecond, d.cost(1, 0))
	h, r := HCCSLink(), RoCELink()
	assert.Less(t, h.cost(1000, 1<<20), r.cost(1000, 1<<20))
}

// Batches on one link share its bandwidth in turn, their round trips
// overlap; other links are independent.
func TestLinkModelSharesALink(t *testing.T) {
	fc := &fakeClock{t: time.Unix(100, 0)}
	m := &LinkModel{Latency: 10 * time.Microsecond, Bandwidth: 1e9, now: fc.now, wait: fc.wait}
	m.charge(0, 1, 1, 10000, fc.t) // bytes 10 µs, then a round trip of 10
	m.charge(0, 1, 1, 0, fc.t)     // no bytes: behind the first's bytes, then 10
	m.charge(0, 1, 1, 5000, fc.t)  // bytes after the first's (10 + 5), then 10
	m.charge(2, 1, 1, 0, fc.t)     // another link: 10
	assert.Equal(t, []time.Duration{20 * time.Microsecond, 20 * time.Microsecond, 25 * time.Microsecond, 10 * time.Microsecond}, fc.waits)
	fc.t = fc.t.Add(time.Second) // the link is idle again
	m.charge(0, 1, 1, 0, fc.t)
	assert.Equal(t, 10*time.Microsecond, fc.waits[4])
}

// The simulator's own copy of a batch runs inside the link's time: a batch
// that started 15 µs ago (the copy) on a link that takes 20 waits 5 more;
// one whose copy took longer than the link waits not at all.
func TestLinkModelOverlapsTheCopy(t *testing.T) {
	fc := &fakeClock{t: time.Unix(100, 0)}
	m := &LinkModel{Latency: 10 * time.Microsecond, Bandwidth: 1e9, now: fc.now, wait: fc.wait}
	start := fc.t
	fc.t = fc.t.Add(15 * time.Microsecond)
	m.charge(0, 1, 1, 10000, start)
	assert.Equal(t, []time.Duration{5 * time.Microsecond}, fc.waits)
	start = fc.t.Add(time.Second)
	fc.t = start.Add(time.Millisecond)
	m.charge(0, 1, 1, 10000, start)
	assert.Len(t, fc.waits, 1, "a copy slower than the link waits no more")
}
