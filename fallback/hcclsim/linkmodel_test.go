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
	assert.Equal(t, 2*time.Microsecond, d.cost(65, 0), "InFlight 0 means 64")
	h, r := HCCSLink(), RoCELink()
	assert.Less(t, h.cost(1000, 1<<20), r.cost(1000, 1<<20))
}

// Batches on one link are served in turn; other links are independent.
func TestLinkModelSharesALink(t *testing.T) {
	fc := &fakeClock{t: time.Unix(100, 0)}
	m := &LinkModel{Latency: 10 * time.Microsecond, Bandwidth: 1e9, now: fc.now, wait: fc.wait}
	m.charge(0, 1, 1, 10000) // 10 + 10 µs
	m.charge(0, 1, 1, 0)     // queued behind: 20 + 10
	m.charge(2, 1, 1, 0)     // another link: 10
	assert.Equal(t, []time.Duration{20 * time.Microsecond, 30 * time.Microsecond, 10 * time.Microsecond}, fc.waits)
	fc.t = fc.t.Add(time.Second) // the link is idle again
	m.charge(0, 1, 1, 0)
	assert.Equal(t, 10*time.Microsecond, fc.waits[3])
}
