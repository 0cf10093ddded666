package hcclsim

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// roundRanks are bare in-process ranks of one world, enough for rounds.
func roundRanks(n int) (*localWorld, []*comm) {
	w := newLocalWorld(n)
	cs := make([]*comm, n)
	for r := range cs {
		cs[r] = &comm{rank: r, n: n, stop: make(chan struct{})}
	}
	return w, cs
}

// A small AllReduce is moved by the last arriver for every rank, a large
// one in shares; both give the rank-order sum on every rank, round after
// round through the ring's slots.
func TestRoundMovesData(t *testing.T) {
	const n = 3
	for _, count := range []int{5, smallRound/4 + 7} {
		w, cs := roundRanks(n)
		rng := rand.New(rand.NewPCG(uint64(count), 3))
		for seq := uint64(0); seq < 2*roundRing+1; seq++ {
			send, recv := make([][]byte, n), make([][]byte, n)
			want := make([]int32, count)
			for r := range send {
				vals := make([]int32, count)
				for i := range vals {
					vals[i] = rng.Int32N(1000) - 500
					want[i] += vals[i]
				}
				send[r], recv[r] = int32Bytes(vals), make([]byte, 4*count)
			}
			var wg sync.WaitGroup
			for r, c := range cs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					d := &opDesc{Kind: kindAllReduce, Count: uint64(count), DT: dtInt32, Op: opSum}
					verdict, err := w.round(c, seq, d, opBufs{send: send[r], recv: recv[r]}, time.Minute)
					assert.NoError(t, verdict)
					assert.NoError(t, err)
					// The rank's output is complete when its round returns.
					assert.Equal(t, int32Bytes(want), recv[r], "count %d seq %d rank %d", count, seq, r)
				}()
			}
			wg.Wait()
			if t.Failed() {
				t.FailNow()
			}
		}
	}
}

// A rank that never arrives makes the others abandon the round at the
// deadline (HCCL_E_TIMEOUT); a rank arriving after that learns it at
// once; disagreeing descriptors are every rank's verdict; a rank whose
// communicator is destroyed while it waits leaves with HCCL_E_PARA.
func TestRoundFailures(t *testing.T) {
	w, cs := roundRanks(2)
	bar := &opDesc{Kind: kindBarrier}
	_, err := w.round(cs[0], 0, bar, opBufs{}, 20*time.Millisecond)
	require.Equal(t, codeTimeout, codeOf(err), "%v", err)
	_, err = w.round(cs[1], 0, bar, opBufs{}, time.Minute)
	require.Equal(t, codeTimeout, codeOf(err), "the late rank: %v", err)

	var wg sync.WaitGroup
	verdicts := make([]error, 2)
	for r, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := &opDesc{Kind: kindAllReduce, Count: uint64(1 + r), DT: dtInt32, Op: opSum}
			v, err := w.round(c, 1, d, opBufs{send: make([]byte, 8), recv: make([]byte, 8)}, time.Minute)
			verdicts[r] = v
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	for r, v := range verdicts {
		require.Equal(t, codePara, codeOf(v), "rank %d: %v", r, v)
	}

	done := make(chan error, 1)
	go func() {
		_, err := w.round(cs[0], 2, bar, opBufs{}, time.Minute)
		done <- err
	}()
	time.Sleep(2 * roundSpin)
	close(cs[0].stop)
	select {
	case err := <-done:
		require.Equal(t, codePara, codeOf(err), "%v", err)
	case <-time.After(time.Minute):
		t.Fatal("a destroyed rank kept waiting")
	}
}

func int32Bytes(v []int32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		u := uint32(x)
		b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
	}
	return b
}
