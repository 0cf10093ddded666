package bench

import (
	"slices"
	"time"
)

// medianTimes runs the functions in turn for the given number of rounds,
// each time a batch of calls (batch bytes of work for size-byte calls, at
// least one call), and returns each one's median time per call.
// Alternating exposes every function to the same machine state, so ratios
// between them hold on a noisy machine, and leaves none of them the
// others' data in the cache.
func medianTimes(size, batch, rounds int, fs ...func()) []time.Duration {
	reps := max(1, batch/size)
	ts := make([][]time.Duration, len(fs))
	for range rounds {
		for k, f := range fs {
			t0 := time.Now()
			for range reps {
				f()
			}
			ts[k] = append(ts[k], time.Since(t0))
		}
	}
	med := make([]time.Duration, len(fs))
	for k := range ts {
		slices.Sort(ts[k])
		med[k] = ts[k][rounds/2] / time.Duration(reps)
	}
	return med
}
