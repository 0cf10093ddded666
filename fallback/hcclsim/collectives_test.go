package hcclsim_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/floatx"
	"github.com/ascend-go/cann/hccl"
)

// Large collectives on 3 ranks (not a power of two), with counts that do
// not divide evenly, in process and across processes; across processes the
// staging buffer is 64 KiB, so each collective moves in many pieces.

// genData returns count random elements of dt as little-endian bytes;
// floats are modest normals (sums stay finite).
//
// It draws from a local splitmix64 stream seeded by rng and is norace:
// it writes memory only its goroutine sees, and under -race a check (and
// a shared generator update) per element made input generation a large
// part of these tests' time.
//
//go:norace
func genData(rng *rand.Rand, dt hccl.DataType, count int) []byte {
	esz := int(dt.Size())
	b := make([]byte, count*esz)
	st := rng.Uint64()
	var spare float64
	haveSpare := false
	for i := 0; i < count; i++ {
		var v float64
		if haveSpare {
			v, haveSpare = spare, false
		} else {
			// Box-Muller: two standard normals from two uniforms.
			u1 := (float64(splitmix(&st)>>11) + 1) / (1 << 53) // (0, 1]
			u2 := float64(splitmix(&st)>>11) / (1 << 53)
			r := math.Sqrt(-2 * math.Log(u1))
			v, spare, haveSpare = r*math.Cos(2*math.Pi*u2), r*math.Sin(2*math.Pi*u2), true
		}
		v *= 8
		switch dt {
		case hccl.Float32:
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(v)))
		case hccl.Float64:
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
		case hccl.Float16:
			binary.LittleEndian.PutUint16(b[2*i:], floatx.F32ToF16(float32(v)))
		case hccl.BFloat16:
			binary.LittleEndian.PutUint16(b[2*i:], floatx.F32ToBF16(float32(v)))
		default:
			x := splitmix(&st)
			for k := 0; k < esz; k++ {
				b[i*esz+k] = byte(x >> (8 * k))
			}
		}
	}
	return b
}

// splitmix advances the splitmix64 state st and returns its next output.
//
//go:norace
func splitmix(st *uint64) uint64 {
	*st += 0x9e3779b97f4a7c15
	z := *st
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// refReduce is the reference reduction, element by element in rank
// order: integers in 64-bit arithmetic truncated to the width (C's
// wrapping), fp16/bf16/fp32 accumulated in float32 and rounded once, fp64
// in float64.
func refReduce(dt hccl.DataType, op hccl.ReduceOp, ins [][]byte) []byte {
	esz := int(dt.Size())
	count := len(ins[0]) / esz
	out := make([]byte, len(ins[0]))
	signed := dt == hccl.Int8 || dt == hccl.Int16 || dt == hccl.Int32 || dt == hccl.Int64
	getU := func(b []byte, i int) uint64 {
		switch esz {
		case 1:
			return uint64(b[i])
		case 2:
			return uint64(binary.LittleEndian.Uint16(b[2*i:]))
		case 4:
			return uint64(binary.LittleEndian.Uint32(b[4*i:]))
		}
		return binary.LittleEndian.Uint64(b[8*i:])
	}
	getI := func(b []byte, i int) int64 {
		sh := 64 - 8*esz
		return int64(getU(b, i)<<sh) >> sh
	}
	putU := func(b []byte, i int, v uint64) {
		for k := 0; k < esz; k++ {
			b[i*esz+k] = byte(v >> (8 * k))
		}
	}
	getF := func(b []byte, i int) float64 {
		switch dt {
		case hccl.Float16:
			return float64(floatx.F16ToF32(uint16(getU(b, i))))
		case hccl.BFloat16:
			return float64(floatx.BF16ToF32(uint16(getU(b, i))))
		case hccl.Float32:
			return float64(math.Float32frombits(uint32(getU(b, i))))
		}
		return math.Float64frombits(getU(b, i))
	}
	putF := func(b []byte, i int, v float64) {
		switch dt {
		case hccl.Float16:
			putU(b, i, uint64(floatx.F32ToF16(float32(v))))
		case hccl.BFloat16:
			putU(b, i, uint64(floatx.F32ToBF16(float32(v))))
		case hccl.Float32:
			putU(b, i, uint64(math.Float32bits(float32(v))))
		default:
			putU(b, i, math.Float64bits(v))
		}
	}
	isFloat := dt == hccl.Float16 || dt == hccl.BFloat16 || dt == hccl.Float32 || dt == hccl.Float64
	for i := 0; i < count; i++ {
		switch {
		case isFloat:
			acc := getF(ins[0], i)
			for _, in := range ins[1:] {
				v := getF(in, i)
				switch op {
				case hccl.Sum:
					acc += v
				case hccl.Prod:
					acc *= v
				case hccl.Max:
					acc = math.Max(acc, v)
				case hccl.Min:
					acc = math.Min(acc, v)
				}
				if dt != hccl.Float64 {
					acc = float64(float32(acc)) // float32 accumulator
				}
			}
			putF(out, i, acc)
		case signed:
			acc := getI(ins[0], i)
			for _, in := range ins[1:] {
				v := getI(in, i)
				switch op {
				case hccl.Sum:
					acc += v
				case hccl.Prod:
					acc *= v
				case hccl.Max:
					acc = max(acc, v)
				case hccl.Min:
					acc = min(acc, v)
				}
			}
			putU(out, i, uint64(acc))
		default:
			acc := getU(ins[0], i)
			for _, in := range ins[1:] {
				v := getU(in, i)
				switch op {
				case hccl.Sum:
					acc += v
				case hccl.Prod:
					acc *= v
				case hccl.Max:
					acc = max(acc, v)
				case hccl.Min:
					acc = min(acc, v)
				}
			}
			putU(out, i, acc)
		}
	}
	return out
}

func TestLargeCollectives(t *testing.T) {
	t.Parallel() // worlds of its own, no process-wide counts (see TestMain)
	const n = 3
	for name, env := range envs(t, n) {
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(rand.Uint64(), 7))
			g := newGroup(t, env, n)
			b := g.b

			cases := []struct {
				dt    hccl.DataType
				op    hccl.ReduceOp
				count int
			}{
				{hccl.Float32, hccl.Sum, 200_003}, {hccl.Float32, hccl.Max, 70_001}, {hccl.BFloat16, hccl.Sum, 150_001},
				{hccl.Float16, hccl.Sum, 40_000}, {hccl.Int8, hccl.Sum, 300_007}, {hccl.Int64, hccl.Min, 30_011},
				{hccl.Int16, hccl.Max, 90_000}, {hccl.Float32, hccl.Min, 33_333}, {hccl.Int32, hccl.Prod, 50_001},
			}
			for _, c := range cases {
				for _, inPlace := range []bool{false, true} {
					what := fmt.Sprintf("AllReduce %v %v count=%d in-place=%v", c.dt, c.op, c.count, inPlace)
					ins := make([][]byte, n)
					for r := range ins {
						ins[r] = genData(rng, c.dt, c.count)
					}
					want := refReduce(c.dt, c.op, ins)
					outs := make([][]byte, n)
					g.must(what, g.each(func(w *rankW) error {
						send, err := w.buf(ins[w.rank], 0)
						if err != nil {
							return err
						}
						recv := send
						if !inPlace {
							if recv, err = w.buf(nil, len(want)); err != nil {
								return err
							}
						}
						if err := b.AllReduce(send, recv, uint64(c.count), c.dt, c.op, w.comm, w.r.Stream()); err != nil {
							return err
						}
						if err := w.r.Sync(); err != nil {
							return err
						}
						outs[w.rank], err = w.read(recv, len(want))
						return err
					}))
					for r := range outs {
						require.Empty(t, diffAt(want, outs[r]), "%s: rank %d", what, r)
					}
				}
			}

			// ReduceScatter, Broadcast, AllGather on one large buffer each.
			const count = 100_003
			esz := 4
			ins := make([][]byte, n)
			for r := range ins {
				ins[r] = genData(rng, hccl.Float32, n*count)
			}
			full := refReduce(hccl.Float32, hccl.Sum, ins)
			outs := make([][]byte, n)
			g.must("ReduceScatter", g.each(func(w *rankW) error {
				send, err := w.buf(ins[w.rank], 0)
				if err != nil {
					return err
				}
				recv, err := w.buf(nil, count*esz)
				if err != nil {
					return err
				}
				if err := b.ReduceScatter(send, recv, count, hccl.Float32, hccl.Sum, w.comm, w.r.Stream()); err != nil {
					return err
				}
				if err := w.r.Sync(); err != nil {
					return err
				}
				outs[w.rank], err = w.read(recv, count*esz)
				return err
			}))
			for r := range outs {
				require.Empty(t, diffAt(full[r*count*esz:(r+1)*count*esz], outs[r]), "ReduceScatter rank %d", r)
			}

			data := genData(rng, hccl.Int8, 500_001)
			g.must("Broadcast", g.each(func(w *rankW) error {
				init := data
				if w.rank != 1 {
					init = nil
				}
				buf, err := w.buf(init, len(data))
				if err != nil {
					return err
				}
				if err := b.Broadcast(buf, uint64(len(data)), hccl.Int8, 1, w.comm, w.r.Stream()); err != nil {
					return err
				}
				if err := w.r.Sync(); err != nil {
					return err
				}
				outs[w.rank], err = w.read(buf, len(data))
				return err
			}))
			for r := range outs {
				require.Empty(t, diffAt(data, outs[r]), "Broadcast rank %d", r)
			}

			parts := make([][]byte, n)
			var gathered []byte
			for r := range parts {
				parts[r] = genData(rng, hccl.Int16, 77_777)
				gathered = append(gathered, parts[r]...)
			}
			g.must("AllGather", g.each(func(w *rankW) error {
				send, err := w.buf(parts[w.rank], 0)
				if err != nil {
					return err
				}
				recv, err := w.buf(nil, len(gathered))
				if err != nil {
					return err
				}
				if err := b.AllGather(send, recv, 77_777, hccl.Int16, w.comm, w.r.Stream()); err != nil {
					return err
				}
				if err := w.r.Sync(); err != nil {
					return err
				}
				outs[w.rank], err = w.read(recv, len(gathered))
				return err
			}))
			for r := range outs {
				require.Empty(t, diffAt(gathered, outs[r]), "AllGather rank %d", r)
			}

			// AlltoAllV with random counts (some zero) and gaps between blocks.
			counts := make([][]uint64, n) // counts[s][d]: elements s sends to d
			for s := range counts {
				counts[s] = make([]uint64, n)
				for d := range counts[s] {
					if rng.IntN(4) != 0 {
						counts[s][d] = uint64(rng.IntN(60_000))
					}
				}
			}
			type plan struct {
				sc, sd, rc, rd []uint64
				send           []byte
				recvLen        int
			}
			plans := make([]plan, n)
			for r := range plans {
				p := &plans[r]
				p.sc, p.sd, p.rc, p.rd = make([]uint64, n), make([]uint64, n), make([]uint64, n), make([]uint64, n)
				var off uint64
				for d := 0; d < n; d++ {
					p.sc[d], p.sd[d] = counts[r][d], off
					off += counts[r][d] + 3
				}
				p.send = genData(rng, hccl.Float32, int(off))
				off = 0
				for s := 0; s < n; s++ {
					p.rc[s], p.rd[s] = counts[s][r], off
					off += counts[s][r] + 5
				}
				p.recvLen = int(off) * 4
			}
			g.must("AlltoAllV", g.each(func(w *rankW) error {
				p := plans[w.rank]
				send, err := w.buf(p.send, 0)
				if err != nil {
					return err
				}
				recv, err := w.buf(nil, p.recvLen)
				if err != nil {
					return err
				}
				// HCCL takes the counts at the call: the caller may reuse
				// its slices before the stream runs the exchange.
				sc, sd, rc, rd := slices.Clone(p.sc), slices.Clone(p.sd), slices.Clone(p.rc), slices.Clone(p.rd)
				if err := b.AlltoAllV(send, sc, sd, hccl.Float32, recv, rc, rd, hccl.Float32, w.comm, w.r.Stream()); err != nil {
					return err
				}
				for _, x := range [][]uint64{sc, sd, rc, rd} {
					for i := range x {
						x[i] = 1 << 40
					}
				}
				if err := w.r.Sync(); err != nil {
					return err
				}
				outs[w.rank], err = w.read(recv, p.recvLen)
				return err
			}))
			for r := range outs {
				for s := 0; s < n; s++ {
					cnt := int(counts[s][r]) * 4
					want := plans[s].send[int(plans[s].sd[r])*4:][:cnt]
					got := outs[r][int(plans[r].rd[s])*4:][:cnt]
					require.Empty(t, diffAt(want, got), "AlltoAllV %d→%d", s, r)
				}
			}

			// Large Send/Recv around the ring, as one BatchSendRecv.
			msgs := make([][]byte, n)
			for r := range msgs {
				msgs[r] = genData(rng, hccl.Uint8, 400_009)
			}
			g.must("BatchSendRecv ring", g.each(func(w *rankW) error {
				next, prev := (w.rank+1)%n, (w.rank+n-1)%n
				send, err := w.buf(msgs[w.rank], 0)
				if err != nil {
					return err
				}
				recv, err := w.buf(nil, len(msgs[prev]))
				if err != nil {
					return err
				}
				items := []hccl.SendRecvItem{
					{Type: hccl.RecvType, Buf: recv, Count: uint64(len(msgs[prev])), DataType: hccl.Uint8, RemoteRank: uint32(prev)},
					{Type: hccl.SendType, Buf: send, Count: uint64(len(msgs[w.rank])), DataType: hccl.Uint8, RemoteRank: uint32(next)},
				}
				if err := b.BatchSendRecv(items, w.comm, w.r.Stream()); err != nil {
					return err
				}
				if err := w.r.Sync(); err != nil {
					return err
				}
				outs[w.rank], err = w.read(recv, len(msgs[prev]))
				return err
			}))
			for r := range outs {
				require.Empty(t, diffAt(msgs[(r+n-1)%n], outs[r]), "ring rank %d", r)
			}

			// Several Send/Recv pairs in a row between ranks 0 and 2 (many
			// messages in flight on one pair).
			big := genData(rng, hccl.Float64, 50_000)
			g.must("Send/Recv", g.each(func(w *rankW) error {
				switch w.rank {
				case 0:
					buf, err := w.buf(big, 0)
					if err != nil {
						return err
					}
					for k := 0; k < 3; k++ {
						if err := b.Send(unsafe.Add(buf, k*8*10_000), 20_000, hccl.Float64, 2, w.comm, w.r.Stream()); err != nil {
							return err
						}
					}
					return w.r.Sync()
				case 2:
					buf, err := w.buf(nil, 3*20_000*8)
					if err != nil {
						return err
					}
					for k := 0; k < 3; k++ {
						if err := b.Recv(unsafe.Add(buf, k*20_000*8), 20_000, hccl.Float64, 0, w.comm, w.r.Stream()); err != nil {
							return err
						}
					}
					if err := w.r.Sync(); err != nil {
						return err
					}
					got, err := w.read(buf, 3*20_000*8)
					if err != nil {
						return err
					}
					for k := 0; k < 3; k++ {
						want := big[k*8*10_000:][:20_000*8]
						if d := diffAt(want, got[k*20_000*8:][:20_000*8]); d != "" {
							return fmt.Errorf("message %d: %s", k, d)
						}
					}
				}
				return nil
			}))
		})
	}
}
