package procs

import (
	"bufio"
	"encoding/gob"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/fallback/hcclsim"
	"github.com/ascend-go/cann/hccl"
)

// Options configure Start (a plain value).
type Options struct {
	// Processes is the number of rank processes (at least 1).
	Processes int
	// Devices is the number of devices of each child's NPU (default 1).
	Devices int
	// ExecTimeout and ConnectTimeout configure every child's HCCL model
	// and the parent's rendezvous (see hcclsim.Options).
	ExecTimeout, ConnectTimeout time.Duration
	// BufferBytes is each rank's staging memory (hcclsim.Options).
	BufferBytes int
	// Staged builds the children's NPUs without shareable device memory
	// (fallback.WithShareableDeviceMemory), so their communicators move
	// data through staging instead of directly between device memories.
	Staged bool
	// Pedantic sets hcclsim.Options.Pedantic in every child.
	Pedantic bool
	// SocName sets hcclsim.Options.SocName in every child.
	SocName string
	// Args are the arguments the child is started with; a test binary
	// passes "-test.run=^TestName$" naming a test that calls ServeChild
	// when IsChild.
	Args []string
	// Stderr receives the children's standard error (default os.Stderr).
	Stderr io.Writer
}

// Cluster is a set of rank processes. Safe for concurrent use; each Proc
// serves one call at a time.
type Cluster struct {
	procs []*Proc
	npu   *fallback.NPU // the parent's: only its rendezvous is used
	sim   *hcclsim.Sim
	be    *Backend
	once  sync.Once
}

// Proc is one rank process. Its methods are safe for concurrent use and
// serialised (the child runs one call at a time).
type Proc struct {
	idx    int
	cmd    *exec.Cmd
	in     io.WriteCloser
	bw     *bufio.Writer
	enc    *gob.Encoder
	dec    *gob.Decoder
	mu     sync.Mutex
	dead   error
	killed atomic.Bool
}

// Start launches opts.Processes children by re-executing this binary.
func Start(opts Options) (*Cluster, error) {
	if opts.Processes < 1 {
		return nil, fmt.Errorf("procs: %d processes", opts.Processes)
	}
	if opts.Devices < 1 {
		opts.Devices = 1
	}
	if opts.Stderr == nil {
		opts.Stderr = os.Stderr
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	// The parent hosts the rendezvous of root infos it creates; a tiny NPU
	// satisfies the model, which touches no memory for that.
	npu, err := fallback.New(fallback.WithDevices(1), fallback.WithDeviceMemory(1<<20), fallback.WithHostMemory(1<<20))
	if err != nil {
		return nil, err
	}
	c := &Cluster{npu: npu, sim: hcclsim.New(npu, hcclsim.Options{
		ExecTimeout: opts.ExecTimeout, ConnectTimeout: opts.ConnectTimeout, BufferBytes: opts.BufferBytes})}
	c.be = &Backend{c: c}
	env := append(os.Environ(),
		envChild+"=1",
		envDevices+"="+strconv.Itoa(opts.Devices),
		envExec+"="+strconv.FormatInt(opts.ExecTimeout.Milliseconds(), 10),
		envConnect+"="+strconv.FormatInt(opts.ConnectTimeout.Milliseconds(), 10),
		envBuffer+"="+strconv.Itoa(opts.BufferBytes))
	if opts.Staged {
		env = append(env, envStaged+"=1")
	}
	if opts.Pedantic {
		env = append(env, envPedant+"=1")
	}
	if opts.SocName != "" {
		env = append(env, envSoc+"="+opts.SocName)
	}
	for i := 0; i < opts.Processes; i++ {
		cmd := exec.Command(exe, opts.Args...)
		cmd.Env = env
		cmd.Stderr = opts.Stderr
		in, err := cmd.StdinPipe()
		if err != nil {
			_ = c.Close()
			return nil, err
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			_ = c.Close()
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			_ = c.Close()
			return nil, err
		}
		bw := bufio.NewWriter(in)
		c.procs = append(c.procs, &Proc{idx: i, cmd: cmd, in: in, bw: bw, enc: gob.NewEncoder(bw),
			dec: gob.NewDecoder(bufio.NewReader(out))})
	}
	return c, nil
}

// Backend returns the hccl.Backend whose calls run in the children.
func (c *Cluster) Backend() *Backend {
	if c == nil {
		return nil
	}
	return c.be
}

// Procs is the number of rank processes.
func (c *Cluster) Procs() int {
	if c == nil {
		return 0
	}
	return len(c.procs)
}

// Proc returns rank process i.
func (c *Cluster) Proc(i int) *Proc {
	if c == nil || i < 0 || i >= len(c.procs) {
		return nil
	}
	return c.procs[i]
}

// Kill ends rank process i with SIGKILL (fault injection) and reaps it.
func (c *Cluster) Kill(i int) error {
	if c == nil || i < 0 || i >= len(c.procs) {
		return hccl.Errorf("Cluster.Kill", hccl.EPara, "no rank process %d", i)
	}
	p := c.procs[i]
	p.killed.Store(true) // not under mu: a call in progress holds it
	return p.cmd.Process.Signal(syscall.SIGKILL)
}

// Close asks every child to exit, waits for them (killing any that does
// not exit within 10 s) and stops the parent's rendezvous. Idempotent.
func (c *Cluster) Close() error {
	if c == nil {
		return nil
	}
	var first error
	c.once.Do(func() {
		for _, p := range c.procs {
			p.mu.Lock()
			if p.dead == nil {
				_ = p.enc.Encode(&req{Op: "Exit"})
				_ = p.bw.Flush()
			}
			_ = p.in.Close()
			p.mu.Unlock()
		}
		for _, p := range c.procs {
			done := make(chan error, 1)
			go func() { done <- p.cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil && first == nil && !p.killed.Load() {
					first = fmt.Errorf("rank process %d: %v", p.idx, err)
				}
			case <-time.After(10 * time.Second):
				_ = p.cmd.Process.Kill()
				<-done
				if first == nil {
					first = fmt.Errorf("rank process %d did not exit", p.idx)
				}
			}
		}
		_ = c.sim.Close()
		_ = c.npu.Close()
	})
	return first
}

// call sends r to the child and returns its answer. A child that died
// gives an *hccl.Error HCCL_E_TIMEOUT for the operation.
func (p *Proc) call(r *req) (resp, error) {
	if p == nil {
		return resp{}, hccl.NilHandle(r.Op, "rank process")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dead != nil {
		return resp{}, p.dead
	}
	var res resp
	err := p.enc.Encode(r)
	if err == nil {
		err = p.bw.Flush()
	}
	if err == nil {
		err = p.dec.Decode(&res)
	}
	if err != nil {
		p.dead = &hccl.Error{Op: r.Op, Code: hccl.ETimeout, Msg: fmt.Sprintf("rank process %d is gone: %v", p.idx, err)}
		return resp{}, p.dead
	}
	return res, res.Err.err()
}

// Index is the process's position in the cluster.
func (p *Proc) Index() int {
	if p == nil {
		return -1
	}
	return p.idx
}

// Pid is the child's process id.
func (p *Proc) Pid() int {
	if p == nil || p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// OpenRank sets device dev current on the child's serving thread and
// creates a stream there.
func (p *Proc) OpenRank(dev int32) (acl.StreamHandle, error) {
	r, err := p.call(&req{Op: "OpenRank", Dev: dev})
	return acl.StreamHandle(r.U), err
}

// CloseRank synchronizes and destroys the stream and resets the device.
func (p *Proc) CloseRank(dev int32, s acl.StreamHandle) error {
	_, err := p.call(&req{Op: "CloseRank", Dev: dev, S: uint64(s)})
	return err
}

// Alloc allocates device memory of the current device in the child and
// returns its address there.
func (p *Proc) Alloc(size uint64) (uintptr, error) {
	r, err := p.call(&req{Op: "Alloc", Size: size})
	return uintptr(r.U), err
}

// Free frees memory from Alloc.
func (p *Proc) Free(addr uintptr) error {
	_, err := p.call(&req{Op: "Free", A: uint64(addr)})
	return err
}

// Write copies data into the child's memory at addr.
func (p *Proc) Write(addr uintptr, data []byte) error {
	_, err := p.call(&req{Op: "Write", A: uint64(addr), Bytes: data})
	return err
}

// Read copies n bytes of the child's memory at addr.
func (p *Proc) Read(addr uintptr, n int) ([]byte, error) {
	r, err := p.call(&req{Op: "Read", A: uint64(addr), Size: uint64(n)})
	return r.Data, err
}

// Sync synchronizes stream s in the child.
func (p *Proc) Sync(s acl.StreamHandle) error {
	_, err := p.call(&req{Op: "Sync", S: uint64(s)})
	return err
}

// Live is the child's hcclsim.Sim.Live.
func (p *Proc) Live() (int, error) {
	r, err := p.call(&req{Op: "Live"})
	return int(r.U), err
}

// Traffic is the child's hcclsim.ReadTraffic: the bytes its
// communicators moved through staging and directly.
func (p *Proc) Traffic() (hcclsim.Traffic, error) {
	r, err := p.call(&req{Op: "Traffic"})
	return hcclsim.Traffic{StagedBytes: r.U, DirectBytes: r.Size}, err
}

// Goroutines is runtime.NumGoroutine in the child.
func (p *Proc) Goroutines() (int, error) {
	r, err := p.call(&req{Op: "Goroutines"})
	return int(r.U), err
}

// HoldStream blocks stream s with a task until ReleaseStream, so that
// operations issued meanwhile are checked at the call and run later.
func (p *Proc) HoldStream(s acl.StreamHandle) error {
	_, err := p.call(&req{Op: "HoldStream", S: uint64(s)})
	return err
}

// ReleaseStream lets a stream held by HoldStream run on.
func (p *Proc) ReleaseStream(s acl.StreamHandle) error {
	_, err := p.call(&req{Op: "ReleaseStream", S: uint64(s)})
	return err
}

// LoopAllReduce runs iters AllReduce calls on the child's communicator h
// (the child's own handle, see Backend.Local) and synchronizes; the time
// is measured in the child.
func (p *Proc) LoopAllReduce(h hccl.CommHandle, s acl.StreamHandle, send, recv uintptr, count uint64,
	dt hccl.DataType, op hccl.ReduceOp, iters int) (time.Duration, error) {
	r, err := p.call(&req{Op: "LoopAllReduce", H: uint64(h), S: uint64(s), A: uint64(send), B: uint64(recv),
		Count: count, DT: int32(dt), ROp: int32(op), Iters: iters})
	return time.Duration(r.Ns), err
}

// LoopBatchGet reads descs from peer iters times, in BatchGet calls of at
// most hccl.MaxOneSideDescs descriptors, and synchronizes; the time is
// measured in the child.
func (p *Proc) LoopBatchGet(h hccl.CommHandle, s acl.StreamHandle, peer uint32, descs []hccl.OneSideOpDesc, iters int) (time.Duration, error) {
	r, err := p.call(&req{Op: "LoopBatchGet", H: uint64(h), S: uint64(s), U1: peer, Descs: wireDescs(descs), Iters: iters})
	return time.Duration(r.Ns), err
}
