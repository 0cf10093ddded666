package hcclsim_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/fallback/hcclsim"
	"github.com/ascend-go/cann/fallback/hcclsim/procs"
	"github.com/ascend-go/cann/hccl/hccltest"
)

// testTimeout is the exec and connect timeout of the tests: long enough
// for a 64 MiB collective on a loaded machine, short enough that the
// subtests that wait one out stay quick.
const testTimeout = 3 * time.Second

// hangBound is the exec and connect timeout of worlds in which no test
// waits a timeout out: a bound on a hang that a loaded machine (-race,
// other jobs) never reaches by being slow.
const hangBound = 2 * time.Minute

// newNPU returns an initialised fallback NPU with n devices, closed at the
// end of the test.
func newNPU(t testing.TB, n int) *fallback.NPU {
	t.Helper()
	npu, err := fallback.New(fallback.WithDevices(n))
	require.NoError(t, err)
	require.NoError(t, npu.Init(""))
	t.Cleanup(func() { _ = npu.Close() })
	return npu
}

// newSim returns the HCCL model over npu with the test timeouts, closed at
// the end of the test.
func newSim(t testing.TB, npu *fallback.NPU) *hcclsim.Sim {
	sim := hcclsim.New(npu, hcclsim.Options{ExecTimeout: testTimeout, ConnectTimeout: testTimeout})
	t.Cleanup(func() { _ = sim.Close() })
	return sim
}

func procsOptions(buffer int) procs.Options {
	return procs.Options{BufferBytes: buffer}
}

// procsOptionsSmall gives rank processes a 64 KiB staging buffer, so large
// transfers move in many pieces.
func procsOptionsSmall() procs.Options { return procsOptions(64 << 10) }

// TestConformanceInProcess runs the shared HCCL suite with every rank a
// device of one fallback NPU, driven by its own goroutine.
func TestConformanceInProcess(t *testing.T) {
	t.Parallel() // its own NPU or rank processes; mostly waits (see TestMain)
	npu := newNPU(t, 8)
	sim := hcclsim.New(npu, hcclsim.Options{ExecTimeout: testTimeout, ConnectTimeout: testTimeout})
	t.Cleanup(func() { _ = sim.Close() })
	hccltest.Run(t, &npuEnv{npu: npu, sim: sim}, hccltest.Options{Timeout: testTimeout})
}

// startCluster launches n rank processes (each with n devices) for the
// test, closed at its end.
func startCluster(t testing.TB, n int, opts procs.Options) *procs.Cluster {
	t.Helper()
	opts.Processes, opts.Devices = n, n
	opts.Args = []string{"-test.run=^$"}
	if opts.ExecTimeout == 0 {
		opts.ExecTimeout = testTimeout
	}
	if opts.ConnectTimeout == 0 {
		opts.ConnectTimeout = 10 * testTimeout
	}
	cl, err := procs.Start(opts)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, cl.Close()) })
	return cl
}

// procsLack is what ranks in separate processes lack: nothing since
// CommInitClusterInfo forms worlds across processes.
var procsLack []hccltest.Feature

// TestConformanceMultiProcess runs the shared HCCL suite on 1–8 ranks, each
// in its own process: the rendezvous runs in the test process, data moves
// through shared memory.
func TestConformanceMultiProcess(t *testing.T) {
	t.Parallel() // its own NPU or rank processes; mostly waits (see TestMain)
	cl := startCluster(t, 8, procs.Options{ConnectTimeout: testTimeout})
	waited := waitedOut.Load()
	hccltest.Run(t, &procEnv{cl: cl, concurrent: true}, hccltest.Options{Timeout: testTimeout, Lacks: procsLack})
	// A sequential subtest that held processes while making a group would
	// have waited leaseWait out for nothing.
	require.Equal(t, waited, waitedOut.Load(), "groups waited for processes that did not free")
}
