package zcrt

import (
	"testing"
	"time"
)

// BenchmarkPrepareApply is the host work of one execution: check the
// buffers and refresh the argument slots, with one input swapped per
// execution. The baseline (x_full) rewrites every IO slot each time, as a
// runtime without per-IO change tracking would.
func BenchmarkPrepareApply(b *testing.B) {
	rng := newRng(b)
	m := testModel(b, rng)
	r := newRuntime(b, m, Config{})
	in, out := devBufs(rng, r.Inputs(), 0), devBufs(rng, r.Outputs(), 0)
	var e Exec
	b.ReportAllocs()
	patched := 0
	for b.Loop() {
		in[0].Addr ^= 4096
		if err := r.Prepare("bench", in, out, &e); err != nil {
			b.Fatal(err)
		}
		patched += r.Apply(&e)
	}
	per := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(float64(patched)/float64(b.N), "patched/op")

	// Baseline: the same checks, then every slot of every IO rewritten.
	start := time.Now()
	for range b.N {
		in[0].Addr ^= 4096
		if err := r.Prepare("bench", in, out, &e); err != nil {
			b.Fatal(err)
		}
		for k, recs := range [][]IORecord{r.in, r.out} {
			binds := [][]IOBind{e.In, e.Out}[k]
			for i := range recs {
				t := uint64(binds[i].Target)
				for _, s := range recs[i].Slots {
					r.args[s.Index] = t + uint64(s.Rel)
				}
				recs[i].current = t
			}
		}
	}
	full := time.Since(start) / time.Duration(b.N)
	b.ReportMetric(float64(full.Nanoseconds()), "full_ns/op")
	b.ReportMetric(float64(per)/float64(max(full, 1)), "x_full")
}
