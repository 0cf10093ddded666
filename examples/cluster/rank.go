package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"unsafe"

	"github.com/ascend-go/cann"
	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/fallback/hcclsim"
	"github.com/ascend-go/cann/hccl"
	"github.com/ascend-go/cann/internal/examplecli"
)

// gatherCount is the int32 elements each rank contributes to AllGather.
const gatherCount = 1024

// tableRows is the rows of the table each rank exposes to BatchGet.
const tableRows = 4096

// values are a rank's inputs, from the job's seed: every rank can compute
// every other rank's, which is how results are checked.
func allReduceInput(seed uint64, rank, count int) []float32 {
	rng := rand.New(rand.NewPCG(seed, uint64(rank)))
	v := make([]float32, count)
	for i := range v {
		// Integers in [-1000, 1000]: sums of up to 8000 ranks are exact in fp32.
		v[i] = float32(rng.IntN(2001) - 1000)
	}
	return v
}

func gatherInput(seed uint64, rank int) []int32 {
	rng := rand.New(rand.NewPCG(seed^0x9e3779b97f4a7c15, uint64(rank)))
	v := make([]int32, gatherCount)
	for i := range v {
		v[i] = int32(rng.Uint32())
	}
	return v
}

func tableBytes(seed uint64, rank int) []byte {
	rng := rand.New(rand.NewPCG(seed^0x51ed27, uint64(rank)))
	b := make([]byte, tableRows*rowBytes)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// runRank is one rank: InitFromEnv, then the collectives and reads, each
// checked.
func runRank(cfg config, out io.Writer) error {
	env, err := hccl.ReadJobEnv()
	if err != nil {
		return err
	}
	b, err := examplecli.ResolveBackend(cfg.backend)
	if err != nil {
		return err
	}
	opt := cann.Options{HCCLSim: hcclsim.Options{ConnectTimeout: cfg.timeout, ExecTimeout: cfg.timeout}}
	if b.Mode != cann.Native {
		// A fallback NPU with the rank's device (ids as the table gives
		// them) and memory its peers can map, as over HCCS.
		opt.Fallback = []fallback.Option{fallback.WithDevices(int(env.DeviceID) + 1), fallback.WithDeviceMemory(256 << 20),
			fallback.WithShareableDeviceMemory()}
	}
	p, err := b.Open(opt)
	if err != nil {
		return err
	}
	defer p.Close()
	rt, err := acl.Init(p.Backend, "")
	if err != nil {
		return err
	}
	defer rt.Close()
	job, err := hccl.InitFromEnv(rt, p.HCCL)
	if err != nil {
		return err
	}
	defer job.Close()
	rank, n := job.Comm.Rank(), job.Comm.Size()
	fmt.Fprintf(out, "rank %d: %s\n", rank, joinedLine)
	fmt.Fprintf(out, "rank %d: device %d, %d ranks, backend %s\n", rank, env.DeviceID, n, p.Mode)
	ctx := context.Background()
	dev := job.Device
	alloc := func(size int) (*acl.DeviceBuffer, error) { return dev.Malloc(uintptr(size), acl.MemMallocHugeFirst) }

	// AllReduce, fp32 sum, against the sum of every rank's input.
	in := allReduceInput(cfg.seed, rank, cfg.count)
	buf, err := alloc(4 * cfg.count)
	if err != nil {
		return err
	}
	if err := buf.CopyFromHost(f32Bytes(in)); err != nil {
		return err
	}
	if err := job.Comm.AllReduce(ctx, buf.Ptr(), buf.Ptr(), uint64(cfg.count), hccl.Float32, hccl.Sum); err != nil {
		return err
	}
	if err := job.Stream.Synchronize(); err != nil {
		return fmt.Errorf("AllReduce: %w", err)
	}
	got := make([]byte, 4*cfg.count)
	if err := buf.CopyToHost(got); err != nil {
		return err
	}
	want := make([]float64, cfg.count)
	for r := 0; r < n; r++ {
		for i, v := range allReduceInput(cfg.seed, r, cfg.count) {
			want[i] += float64(v)
		}
	}
	for i := range want {
		if v := math.Float32frombits(binary.LittleEndian.Uint32(got[4*i:])); float64(v) != want[i] {
			return fmt.Errorf("AllReduce element %d = %v, want %v", i, v, want[i])
		}
	}
	fmt.Fprintf(out, "rank %d: AllReduce of %d fp32: OK\n", rank, cfg.count)

	// AllGather, int32: rank r's block lands at r·gatherCount on every rank.
	send, err := alloc(4 * gatherCount)
	if err != nil {
		return err
	}
	recv, err := alloc(4 * gatherCount * n)
	if err != nil {
		return err
	}
	if err := send.CopyFromHost(i32Bytes(gatherInput(cfg.seed, rank))); err != nil {
		return err
	}
	if err := job.Comm.AllGather(ctx, send.Ptr(), recv.Ptr(), gatherCount, hccl.Int32); err != nil {
		return err
	}
	if err := job.Stream.Synchronize(); err != nil {
		return fmt.Errorf("AllGather: %w", err)
	}
	all := make([]byte, 4*gatherCount*n)
	if err := recv.CopyToHost(all); err != nil {
		return err
	}
	for r := 0; r < n; r++ {
		for i, v := range gatherInput(cfg.seed, r) {
			if g := int32(binary.LittleEndian.Uint32(all[4*(r*gatherCount+i):])); g != v {
				return fmt.Errorf("AllGather block of rank %d element %d = %d, want %d", r, i, g, v)
			}
		}
	}
	fmt.Fprintf(out, "rank %d: AllGather of %d int32 per rank: OK\n", rank, gatherCount)

	if n == 1 {
		fmt.Fprintf(out, "rank %d: BatchGet skipped (one rank has no peer)\n", rank)
		return nil
	}
	// One-sided reads: every rank exposes a table; each reads random rows
	// of its neighbour's.
	table, err := alloc(tableRows * rowBytes)
	if err != nil {
		return err
	}
	if err := table.CopyFromHost(tableBytes(cfg.seed, rank)); err != nil {
		return err
	}
	win, err := job.Comm.OpenWindow(ctx, hccl.MemDevice, table.Ptr(), tableRows*rowBytes)
	if err != nil {
		return err
	}
	defer win.Close()
	peer := (rank + 1) % n
	dst, err := alloc(cfg.rows * rowBytes)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(cfg.seed, uint64(rank)+1000))
	idx := make([]int, cfg.rows)
	reads := make([]hccl.Transfer, cfg.rows)
	for i := range reads {
		idx[i] = rng.IntN(tableRows)
		reads[i] = hccl.Transfer{Local: unsafe.Add(dst.Ptr(), i*rowBytes), Offset: uint64(idx[i] * rowBytes),
			Count: rowBytes, DataType: hccl.Uint8}
	}
	for lo := 0; lo < len(reads); lo += hccl.MaxOneSideDescs {
		if err := win.Get(ctx, peer, reads[lo:min(len(reads), lo+hccl.MaxOneSideDescs)]); err != nil {
			return err
		}
	}
	if err := job.Stream.Synchronize(); err != nil {
		return fmt.Errorf("BatchGet: %w", err)
	}
	rows := make([]byte, cfg.rows*rowBytes)
	if err := dst.CopyToHost(rows); err != nil {
		return err
	}
	ref := tableBytes(cfg.seed, peer)
	for i, k := range idx {
		for j := 0; j < rowBytes; j++ {
			if rows[i*rowBytes+j] != ref[k*rowBytes+j] {
				return fmt.Errorf("BatchGet row %d of rank %d byte %d = %#x, want %#x", k, peer, j, rows[i*rowBytes+j], ref[k*rowBytes+j])
			}
		}
	}
	fmt.Fprintf(out, "rank %d: BatchGet of %d rows from rank %d: OK\n", rank, cfg.rows, peer)
	// Peers may still be reading this rank's table: meet before closing.
	if err := job.Comm.Barrier(ctx); err != nil {
		return err
	}
	return job.Stream.Synchronize()
}

func f32Bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func i32Bytes(v []int32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return b
}
