package main

import (
	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/internal/examplecli"
)

// Bounds of the flags.
const (
	// maxRanks is the most ranks the HCCL fallback's rendezvous admits
	// into one world (fallback/hcclsim hub.go, maxWorldRanks).
	maxRanks = 512
	// maxIters bounds the timed iterations (each is a full AllReduce).
	maxIters = 1_000_000
	// maxRows bounds the rows of one BatchGet: each rank keeps a
	// descriptor and an index per row.
	maxRows = 1 << 24
	// rankOverhead is the host memory of a rank process besides its job:
	// the Go runtime, the NPU and the HCCL model's buffers.
	rankOverhead = 64 << 20
)

// rankDeviceBytes is the device memory a rank's job takes: the AllReduce
// send and receive buffers, its table, the rows it reads, the large
// reads' destination and slack for the HCCL model. false on overflow.
func rankDeviceBytes(cfg config) (int64, bool) {
	const large = 1 << 20
	table, ok1 := examplecli.Product(tableRows, int64(cfg.rowSize))
	rows, ok2 := examplecli.Product(int64(cfg.rows), int64(cfg.rowSize))
	two, ok3 := examplecli.Product(2, cfg.size)
	n, ok4 := examplecli.Sum(two, table, rows, 16*large, 16<<20)
	return n, ok1 && ok2 && ok3 && ok4
}

// check refuses a job that cannot run before any rank process starts,
// naming the flag: counts outside their ranges (an AllReduce bandwidth
// over zero iterations is meaningless), a backend the ranks cannot use,
// a rank larger than a fallback device, ranks that together exceed the
// host's memory.
func (cfg *config) check(backend string) error {
	b, err := examplecli.ResolveBackend(backend)
	if err == nil {
		_, err = b.FallbackOnly("allreduce", "its ranks are processes of the HCCL fallback (fallback/hcclsim) on host-memory NPUs; "+
			"on the device run one process per NPU with hccl/native")
	}
	if err != nil {
		return &examplecli.UsageError{Msg: err.Error()}
	}
	for _, c := range []struct {
		name   string
		v, max int64
	}{{"ranks", int64(cfg.ranks), maxRanks}, {"iters", int64(cfg.iters), maxIters}, {"rows", int64(cfg.rows), maxRows}, {"row", int64(cfg.rowSize), 1 << 20}} {
		if err := examplecli.CheckRange(c.name, c.v, 1, c.max); err != nil {
			return err
		}
	}
	if cfg.timeout <= 0 {
		return examplecli.Usagef("-timeout %v: must be positive", cfg.timeout)
	}
	need, ok := rankDeviceBytes(*cfg)
	if !ok {
		return examplecli.Usagef("-size %d -rows %d -row %d: a rank's memory overflows", cfg.size, cfg.rows, cfg.rowSize)
	}
	// A rank runs on one device of a fallback NPU: its job must fit the
	// device memory such a device reports.
	npu, err := fallback.New(fallback.WithDevices(1), fallback.WithHostMemory(1<<20))
	if err != nil {
		return err
	}
	defer npu.Close()
	rt, err := acl.Init(npu, "")
	if err != nil {
		return err
	}
	defer rt.Close()
	dev, err := rt.OpenDevice(0)
	if err != nil {
		return err
	}
	defer dev.Close()
	if err := examplecli.CheckDevice(dev, "a rank (-size, -rows, -row)", need); err != nil {
		return err
	}
	// The host holds every rank's device memory (the fallback's is host
	// memory) and its host copies of the AllReduce data and table.
	copies, ok1 := examplecli.Product(3, cfg.size)
	perRank, ok2 := examplecli.Sum(need, copies, int64(tableRows*cfg.rowSize), rankOverhead)
	all, ok3 := examplecli.Product(perRank, int64(cfg.ranks))
	if !ok1 || !ok2 || !ok3 {
		all = -1
	}
	return examplecli.CheckHost("the ranks together (-ranks, -size, -rows, -row)", all)
}
