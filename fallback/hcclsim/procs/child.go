package procs

import (
	"bufio"
	"encoding/gob"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"time"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/fallback/hcclsim"
	"github.com/ascend-go/cann/hccl"
	"github.com/ascend-go/cann/internal/npuhook"
)

// Environment of a child, set by Start.
const (
	envChild   = "HCCLSIM_PROCS_CHILD"    // "1" makes the process a child
	envDevices = "HCCLSIM_PROCS_DEVICES"  // devices of the child's NPU
	envExec    = "HCCLSIM_PROCS_EXEC_MS"  // execution timeout
	envConnect = "HCCLSIM_PROCS_CONN_MS"  // connect timeout
	envBuffer  = "HCCLSIM_PROCS_BUFFER"   // staging bytes per rank
	envStaged  = "HCCLSIM_PROCS_STAGED"   // "1": device memory not shareable, data staged
	envPedant  = "HCCLSIM_PROCS_PEDANTIC" // "1": hcclsim.Options.Pedantic
	envSoc     = "HCCLSIM_PROCS_SOC"      // hcclsim.Options.SocName
)

// IsChild reports whether this process was started by Start to serve as
// a rank process.
func IsChild() bool { return os.Getenv(envChild) == "1" }

// ServeChild serves the parent's requests on standard input and output
// until the parent closes the pipe, then exits the process. Call it first
// thing in main (or in the test function the parent re-executes) when
// IsChild is true.
func ServeChild() {
	code := 0
	if err := serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "hcclsim/procs child:", err)
		code = 1
	}
	os.Exit(code)
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// serve runs the request loop on one locked OS thread, since the NPU
// binds the current device to the thread.
func serve(in io.Reader, out io.Writer) error {
	runtime.LockOSThread()
	opts := []fallback.Option{fallback.WithDevices(envInt(envDevices, 1))}
	if os.Getenv(envStaged) != "1" {
		// Peers map this process's device memory: data moves directly.
		opts = append(opts, fallback.WithShareableDeviceMemory())
	}
	npu, err := fallback.New(opts...)
	if err != nil {
		return err
	}
	defer npu.Close()
	if err := npu.Init(""); err != nil {
		return err
	}
	sim := hcclsim.New(npu, hcclsim.Options{
		ExecTimeout:    time.Duration(envInt(envExec, 0)) * time.Millisecond,
		ConnectTimeout: time.Duration(envInt(envConnect, 0)) * time.Millisecond,
		BufferBytes:    envInt(envBuffer, 0),
		Pedantic:       os.Getenv(envPedant) == "1",
		SocName:        os.Getenv(envSoc),
	})
	defer sim.Close()
	bw := bufio.NewWriter(out)
	dec, enc := gob.NewDecoder(bufio.NewReader(in)), gob.NewEncoder(bw)
	h := &host{npu: npu, sim: sim, holds: map[uint64]chan struct{}{}}
	for {
		var r req
		if err := dec.Decode(&r); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		if r.Op == "Exit" {
			return nil
		}
		res := h.do(&r)
		if err := enc.Encode(res); err != nil {
			return err
		}
		if err := bw.Flush(); err != nil {
			return err
		}
	}
}

// host executes requests in the child.
type host struct {
	npu   *fallback.NPU
	sim   *hcclsim.Sim
	holds map[uint64]chan struct{}
}

// ptr turns an address of the child's own memory (received as a number)
// back into a pointer; the memory is outside the Go heap.
func ptr(u uint64) unsafe.Pointer {
	a := uintptr(u)
	return *(*unsafe.Pointer)(unsafe.Pointer(&a))
}

func (h *host) do(r *req) (res resp) {
	defer func() {
		if p := recover(); p != nil {
			res = resp{Err: &wireErr{Kind: 3, Msg: fmt.Sprintf("child panicked in %s: %v", r.Op, p)}}
		}
	}()
	var err error
	b, n, c := h.sim, h.npu, hccl.CommHandle(r.H)
	st := acl.StreamHandle(r.S)
	dt := hccl.DataType(r.DT)
	switch r.Op {
	// Rank resources.
	case "OpenRank":
		if err = n.SetDevice(r.Dev); err == nil {
			var s acl.StreamHandle
			s, err = n.CreateStream()
			res.U = uint64(s)
		}
	case "CloseRank":
		err = n.SynchronizeStream(st)
		if e := n.DestroyStream(st); err == nil {
			err = e
		}
		if e := n.ResetDevice(r.Dev); err == nil {
			err = e
		}
	case "Alloc":
		var p unsafe.Pointer
		p, err = n.Malloc(uintptr(max(r.Size, 1)), acl.MemMallocHugeFirst)
		res.U = uint64(uintptr(p))
	case "Free":
		err = n.Free(ptr(r.A))
	case "Write":
		if len(r.Bytes) > 0 {
			err = n.Memcpy(ptr(r.A), uintptr(len(r.Bytes)), unsafe.Pointer(&r.Bytes[0]), uintptr(len(r.Bytes)), acl.MemcpyHostToDevice)
		}
	case "Read":
		res.Data = make([]byte, r.Size)
		if r.Size > 0 {
			err = n.Memcpy(unsafe.Pointer(&res.Data[0]), uintptr(r.Size), ptr(r.A), uintptr(r.Size), acl.MemcpyDeviceToHost)
		}
	case "Sync":
		err = n.SynchronizeStream(st)
	case "Live":
		res.U = uint64(b.Live())
	case "Traffic":
		t := hcclsim.ReadTraffic()
		res.U, res.Size = t.StagedBytes, t.DirectBytes
	case "Goroutines":
		res.U = uint64(runtime.NumGoroutine())
	case "HoldStream":
		// A task that blocks the stream until ReleaseStream: calls made
		// meanwhile pass their call-time checks and wait on the stream.
		gate := make(chan struct{})
		if _, err = npuhook.Of(n).Enqueue(st, "hold", func() error { <-gate; return nil }); err == nil {
			h.holds[r.S] = gate
		}
	case "ReleaseStream":
		if g := h.holds[r.S]; g != nil {
			close(g)
			delete(h.holds, r.S)
		}

	// Timed loops for benchmarks: the clock runs in the child, so the
	// request pipe is not measured.
	case "LoopAllReduce":
		t0 := time.Now()
		for i := 0; i < r.Iters && err == nil; i++ {
			err = b.AllReduce(ptr(r.A), ptr(r.B), r.Count, dt, hccl.ReduceOp(r.ROp), c, st)
		}
		if err == nil {
			err = n.SynchronizeStream(st)
		}
		res.Ns = int64(time.Since(t0))
	case "LoopBatchGet":
		ds := oneDescs(r.Descs)
		t0 := time.Now()
		for i := 0; i < r.Iters && err == nil; i++ {
			// HCCL takes at most MaxOneSideDescs descriptors per batch.
			for lo := 0; lo < len(ds) && err == nil; lo += hccl.MaxOneSideDescs {
				err = b.BatchGet(c, r.U1, ds[lo:min(len(ds), lo+hccl.MaxOneSideDescs)], st)
			}
		}
		if err == nil {
			err = n.SynchronizeStream(st)
		}
		res.Ns = int64(time.Since(t0))

	// hccl.Backend.
	case "CommInitRootInfo", "CommInitRootInfoConfig":
		var root hccl.RootInfo
		copy(root[:], r.Bytes)
		var hc hccl.CommHandle
		if r.Op == "CommInitRootInfo" {
			hc, err = b.CommInitRootInfo(r.U1, &root, r.U2)
		} else {
			cfg := new(hccl.CommConfig)
			copy(unsafe.Slice((*byte)(unsafe.Pointer(cfg)), unsafe.Sizeof(*cfg)), r.Vec0Bytes())
			hc, err = b.CommInitRootInfoConfig(r.U1, &root, r.U2, cfg)
		}
		res.U = uint64(hc)
	case "CommInitClusterInfo", "CommInitClusterInfoConfig":
		res.U, err = initClusterChild(b, r)
	case "CommDestroy":
		err = b.CommDestroy(c)
	case "GetRankSize":
		res.U32, err = b.GetRankSize(c)
	case "GetRankId":
		res.U32, err = b.GetRankId(c)
	case "GetCommName":
		res.Str, err = b.GetCommName(c)
	case "GetCommAsyncError":
		var rr hccl.Result
		rr, err = b.GetCommAsyncError(c)
		res.Result = int32(rr)
	case "Barrier":
		err = b.Barrier(c, st)
	case "AllReduce":
		err = b.AllReduce(ptr(r.A), ptr(r.B), r.Count, dt, hccl.ReduceOp(r.ROp), c, st)
	case "Broadcast":
		err = b.Broadcast(ptr(r.A), r.Count, dt, r.U1, c, st)
	case "AllGather":
		err = b.AllGather(ptr(r.A), ptr(r.B), r.Count, dt, c, st)
	case "ReduceScatter":
		err = b.ReduceScatter(ptr(r.A), ptr(r.B), r.Count, dt, hccl.ReduceOp(r.ROp), c, st)
	case "AlltoAllV":
		err = b.AlltoAllV(ptr(r.A), r.Vec[0], r.Vec[1], dt, ptr(r.B), r.Vec[2], r.Vec[3], hccl.DataType(r.DT2), c, st)
	case "Send":
		err = b.Send(ptr(r.A), r.Count, dt, r.U1, c, st)
	case "Recv":
		err = b.Recv(ptr(r.A), r.Count, dt, r.U1, c, st)
	case "BatchSendRecv":
		items := make([]hccl.SendRecvItem, len(r.Items))
		for i, x := range r.Items {
			items[i] = hccl.SendRecvItem{Type: hccl.SendRecvType(x.Type), Buf: ptr(x.Buf), Count: x.Count,
				DataType: hccl.DataType(x.DT), RemoteRank: x.Peer}
		}
		err = b.BatchSendRecv(items, c, st)
	case "RegisterMem":
		var d hccl.MemDesc
		d, err = b.RegisterMem(c, r.U1, hccl.MemType(r.Typ), ptr(r.A), r.Size)
		res.MemDescs = [][]byte{d[:]}
	case "DeregisterMem":
		err = b.DeregisterMem(c, memDescPtr(r.MemDescs))
	case "ExchangeMemDesc":
		local := make([]hccl.MemDesc, len(r.MemDescs))
		for i, d := range r.MemDescs {
			copy(local[i][:], d)
		}
		remote := make([]hccl.MemDesc, r.Size)
		var got uint32
		got, err = b.ExchangeMemDesc(c, r.U1, local, int32(r.U2), remote)
		res.U32 = got
		for _, d := range remote {
			res.MemDescs = append(res.MemDescs, append([]byte(nil), d[:]...))
		}
	case "EnableMemAccess":
		var m hccl.CommMem
		m, err = b.EnableMemAccess(c, memDescPtr(r.MemDescs))
		res.Mem = commMem{Type: int32(m.Type), Addr: uint64(m.Addr), Size: m.Size}
	case "DisableMemAccess":
		err = b.DisableMemAccess(c, memDescPtr(r.MemDescs))
	case "BatchGet":
		err = b.BatchGet(c, r.U1, oneDescs(r.Descs), st)
	case "BatchPut":
		err = b.BatchPut(c, r.U1, oneDescs(r.Descs), st)
	case "CommRegister":
		var w hccl.RegistrationHandle
		w, err = b.CommRegister(c, ptr(r.A), r.Size, r.U1)
		res.U = uint64(w)
	case "CommDeregister":
		err = b.CommDeregister(c, hccl.RegistrationHandle(r.A))
	case "CommExchangeMem":
		err = b.CommExchangeMem(c, hccl.RegistrationHandle(r.A), r.Peers)
	default:
		err = fmt.Errorf("unknown request %q", r.Op)
	}
	res.Err = toWire(err)
	return res
}

// Vec0Bytes returns the config bytes carried in Bytes after the root info.
func (r *req) Vec0Bytes() []byte {
	if len(r.Bytes) <= hccl.RootInfoBytes {
		return nil
	}
	return r.Bytes[hccl.RootInfoBytes:]
}

func memDescPtr(ds [][]byte) *hccl.MemDesc {
	if len(ds) == 0 || ds[0] == nil {
		return nil
	}
	d := new(hccl.MemDesc)
	copy(d[:], ds[0])
	return d
}

func oneDescs(in []oneDesc) []hccl.OneSideOpDesc {
	out := make([]hccl.OneSideOpDesc, len(in))
	for i, d := range in {
		out[i] = hccl.OneSideOpDesc{LocalAddr: ptr(d.Local), RemoteAddr: uintptr(d.Remote), Count: d.Count, DataType: hccl.DataType(d.DT)}
	}
	return out
}
