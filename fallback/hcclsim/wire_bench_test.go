package hcclsim

import (
	"bytes"
	"encoding/gob"
	"testing"
	"time"
)

// BenchmarkControlFrame: one collective's control round trip as the hub
// relays it (a join with its descriptor in, the joined answer with four
// ranks' descriptors out), encoded and decoded with this package's frames;
// x_gob is the time of the same messages over a gob stream (the encoding
// these frames replaced) divided by ours, measured in the same run.
func BenchmarkControlFrame(b *testing.B) {
	d := &opDesc{Kind: kindAllReduce, Count: 1 << 20, DT: dtFP32, Op: opSum}
	in := &msg{Kind: mJoin, Seq: 7, Desc: d, Timeout: 120 * time.Second}
	out := &msg{Kind: mJoined, Seq: 7, Descs: []*opDesc{d, d, d, d}}
	ours := func(n int) {
		var buf bytes.Buffer
		for range n {
			for _, m := range []*msg{in, out} {
				if err := writeFrame(&buf, m); err != nil {
					b.Fatal(err)
				}
				if _, err := readFrame(&buf, maxFrame); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	viaGob := func(n int) {
		var buf bytes.Buffer
		enc, dec := gob.NewEncoder(&buf), gob.NewDecoder(&buf)
		for range n {
			for _, m := range []*msg{in, out} {
				if err := enc.Encode(m); err != nil {
					b.Fatal(err)
				}
				var got msg
				if err := dec.Decode(&got); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	const batch = 256
	viaGob(batch) // warm
	b.ReportAllocs()
	b.ResetTimer()
	var tOurs, tGob time.Duration
	for i := 0; i < b.N; i += batch {
		k := min(batch, b.N-i)
		t0 := time.Now()
		ours(k)
		t1 := time.Now()
		b.StopTimer()
		viaGob(k)
		tGob += time.Since(t1)
		b.StartTimer()
		tOurs += t1.Sub(t0)
	}
	b.ReportMetric(tGob.Seconds()/tOurs.Seconds(), "x_gob")
}
