package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"time"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/fallback/hcclsim"
	"github.com/ascend-go/cann/hccl"
	"github.com/ascend-go/cann/internal/rootpipe"
)

func timeDuration(ns int64) time.Duration { return time.Duration(ns) }

// runRankFromEnv is the rank process: it reads its rank, the rank count
// and the job from the environment the launcher set, and the root info
// from the pipe it inherited (rootpipe.Read).
func runRankFromEnv(out io.Writer) int {
	rank, err1 := strconv.Atoi(os.Getenv(envRank))
	n, err2 := strconv.Atoi(os.Getenv(envRanks))
	cfg, err3 := decodeJob(os.Getenv(envJob))
	if err1 != nil || err2 != nil || err3 != nil {
		fmt.Fprintf(out, "rank ?: bad environment\n")
		return 2
	}
	root, err := rootpipe.Read()
	if err != nil {
		fmt.Fprintf(out, "rank %d: %v\n", rank, err)
		return 2
	}
	if err := runRank(rank, n, &root, cfg, out); err != nil {
		fmt.Fprintf(out, "rank %d: FAILED: %v\n", rank, err)
		return 1
	}
	return 0
}

// Table of the BatchGet part: tableRows rows of cfg.rowSize bytes per rank.
const tableRows = 1 << 16

// tableByte is byte j of row k of rank r's table: every rank can compute
// what it should read from any peer.
func tableByte(r, k, j int) byte { return byte(uint32(r*2654435761) ^ uint32(k*40503) ^ uint32(j*97)) }

// runRank is one rank of the job, on its own fallback NPU (device 0). A
// failed step panics through must; the deferred recover turns that into
// runRank's result, which is why the result is named.
func runRank(rank, n int, root *hccl.RootInfo, cfg config, out io.Writer) (err error) {
	// The NPU binds the current device to the OS thread, as ACL does.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tableBytes := tableRows * cfg.rowSize
	const large = 1 << 20
	need, _ := rankDeviceBytes(cfg) // the launcher checked it
	mem := uintptr(need)
	// Shareable device memory: the other rank processes map it, so data
	// moves directly between the ranks' buffers, as over HCCS.
	npu, err := fallback.New(fallback.WithDevices(1), fallback.WithDeviceMemory(mem), fallback.WithHostMemory(1<<20),
		fallback.WithShareableDeviceMemory())
	if err != nil {
		return err
	}
	defer npu.Close()
	must := func(err error) {
		if err != nil {
			panic(err)
		}
	}
	defer func() {
		if p := recover(); p != nil {
			if e, ok := p.(error); ok {
				err = e
				return
			}
			panic(p)
		}
	}()
	must(npu.Init(""))
	must(npu.SetDevice(0))
	s, err := npu.CreateStream()
	must(err)
	sim := hcclsim.New(npu, hcclsim.Options{ExecTimeout: cfg.timeout, ConnectTimeout: cfg.timeout})
	defer sim.Close()
	comm, err := hccl.InitRootInfo(sim, root, n, rank, hccl.WithStream(s), hccl.WithDevice(0))
	must(err)
	defer comm.Close()
	ctx := context.Background()
	sync := func() { must(npu.SynchronizeStream(s)) }
	alloc := func(n int) unsafe.Pointer {
		p, err := npu.Malloc(uintptr(n), acl.MemMallocHugeFirst)
		must(err)
		return p
	}
	write := func(dst unsafe.Pointer, b []byte) {
		must(npu.Memcpy(dst, uintptr(len(b)), unsafe.Pointer(&b[0]), uintptr(len(b)), acl.MemcpyHostToDevice))
	}
	read := func(src unsafe.Pointer, n int) []byte {
		b := make([]byte, n)
		must(npu.Memcpy(unsafe.Pointer(&b[0]), uintptr(n), src, uintptr(n), acl.MemcpyDeviceToHost))
		return b
	}

	// AllReduce: element i of rank r is (r+1)·(i mod 1024), so the sum
	// is n(n+1)/2·(i mod 1024), exact in fp32.
	count := int(cfg.size / 4)
	send, recv := alloc(int(cfg.size)), alloc(int(cfg.size))
	host := make([]byte, cfg.size)
	for i := 0; i < count; i++ {
		binary.LittleEndian.PutUint32(host[4*i:], math.Float32bits(float32((rank+1)*(i%1024))))
	}
	write(send, host)
	must(comm.AllReduce(ctx, send, recv, uint64(count), hccl.Float32, hccl.Sum)) // warm-up
	sync()
	t0 := time.Now()
	for it := 0; it < cfg.iters; it++ {
		must(comm.AllReduce(ctx, send, recv, uint64(count), hccl.Float32, hccl.Sum))
	}
	sync()
	per := time.Since(t0) / time.Duration(max(cfg.iters, 1))
	got := read(recv, int(cfg.size))
	tri := n * (n + 1) / 2
	for i := 0; i < count; i++ {
		want := float32(tri * (i % 1024))
		if v := math.Float32frombits(binary.LittleEndian.Uint32(got[4*i:])); v != want {
			return fmt.Errorf("AllReduce element %d = %v, want %v", i, v, want)
		}
	}
	algbw := float64(cfg.size) / per.Seconds() / 1e9
	fmt.Fprintf(out, "rank %d: AllReduce %s: %8.3f ms/op  algbw %6.2f GB/s  busbw %6.2f GB/s  result OK\n",
		rank, sizeName(cfg.size), float64(per)/1e6, algbw, algbw*2*float64(n-1)/float64(n))

	if n == 1 {
		fmt.Fprintf(out, "rank %d: BatchGet skipped (one rank has no peer)\n", rank)
		return nil
	}
	// BatchGet: every rank exposes a table; each reads random rows of its
	// neighbour's, then a few large ranges.
	table := alloc(tableBytes)
	tb := make([]byte, tableBytes)
	for k := 0; k < tableRows; k++ {
		for j := 0; j < cfg.rowSize; j++ {
			tb[k*cfg.rowSize+j] = tableByte(rank, k, j)
		}
	}
	write(table, tb)
	win, err := comm.OpenWindow(ctx, hccl.MemDevice, table, uint64(tableBytes))
	must(err)
	peer := (rank + 1) % n
	rng := rand.New(rand.NewPCG(uint64(rank), 7))
	dst := alloc(cfg.rows * cfg.rowSize)
	idx := make([]int, cfg.rows)
	reads := make([]hccl.Transfer, cfg.rows)
	for i := range reads {
		idx[i] = rng.IntN(tableRows)
		reads[i] = hccl.Transfer{Local: unsafe.Add(dst, i*cfg.rowSize), Offset: uint64(idx[i] * cfg.rowSize),
			Count: uint64(cfg.rowSize), DataType: hccl.Uint8}
	}
	must(win.Get(ctx, peer, reads)) // warm-up
	sync()
	const batches = 5
	t0 = time.Now()
	for b := 0; b < batches; b++ {
		must(win.Get(ctx, peer, reads))
	}
	sync()
	small := time.Since(t0)
	rows := read(dst, cfg.rows*cfg.rowSize)
	for i, k := range idx {
		for j := 0; j < cfg.rowSize; j++ {
			if v := rows[i*cfg.rowSize+j]; v != tableByte(peer, k, j) {
				return fmt.Errorf("BatchGet row %d of rank %d, byte %d = %#x, want %#x", k, peer, j, v, tableByte(peer, k, j))
			}
		}
	}
	big := alloc(16 * large)
	var bigReads []hccl.Transfer
	for i := 0; i < 16 && (i+1)*large <= tableBytes; i++ {
		bigReads = append(bigReads, hccl.Transfer{Local: unsafe.Add(big, i*large), Offset: uint64(i * large), Count: large, DataType: hccl.Uint8})
	}
	var largeGBs float64
	if len(bigReads) > 0 {
		must(win.Get(ctx, peer, bigReads))
		sync()
		t0 = time.Now()
		for b := 0; b < batches; b++ {
			must(win.Get(ctx, peer, bigReads))
		}
		sync()
		largeGBs = float64(batches*len(bigReads)*large) / time.Since(t0).Seconds() / 1e9
		got := read(big, len(bigReads)*large)
		for off := 0; off < len(got); off++ {
			k, j := off/cfg.rowSize, off%cfg.rowSize
			if got[off] != tableByte(peer, k, j) {
				return fmt.Errorf("large BatchGet byte %d = %#x, want %#x", off, got[off], tableByte(peer, k, j))
			}
		}
	}
	fmt.Fprintf(out, "rank %d: BatchGet from rank %d: %d × %d B rows %6.2f Mreads/s, 1 MiB reads %6.2f GB/s  result OK\n",
		rank, peer, cfg.rows, cfg.rowSize, float64(batches*cfg.rows)/small.Seconds()/1e6, largeGBs)
	// Peers may still be reading this rank's table: meet before closing.
	must(comm.Barrier(ctx))
	sync()
	must(win.Close())
	return nil
}
