package hcclsim

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/hccl"
)

// tableFor writes a one-server table of the given devices.
func tableFor(t *testing.T, status string, devs ...int) string {
	t.Helper()
	var ds []string
	for r, d := range devs {
		ds = append(ds, `{"device_id": "`+strconv.Itoa(d)+`", "rank_id": "`+strconv.Itoa(r)+`"}`)
	}
	path := filepath.Join(t.TempDir(), "hccl.json")
	body := `{"version": "1.0", "server_list": [{"server_id": "s", "device": [` + strings.Join(ds, ",") + `]}], "status": "` + status + `"}`
	require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
	return path
}

// onDevice runs f on a locked thread with dev current.
func onDevice(t *testing.T, npu *fallback.NPU, dev int32, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		require.NoError(t, npu.SetDevice(dev))
		defer func() { _ = npu.ResetDevice(dev) }()
		f()
	}()
	<-done
}

func newTestSim(t *testing.T, devices int, connect time.Duration) (*fallback.NPU, *Sim) {
	t.Helper()
	npu, err := fallback.New(fallback.WithDevices(devices), fallback.WithDeviceMemory(8<<20))
	require.NoError(t, err)
	require.NoError(t, npu.Init(""))
	s := New(npu, Options{ConnectTimeout: connect, ExecTimeout: connect})
	t.Cleanup(func() { _ = s.Close(); _ = npu.Close() })
	return npu, s
}

// TestClusterInfoStatusWait: a table that stays "initializing" fails with
// HCCL_E_TIMEOUT after the connect timeout, naming the file and status.
func TestClusterInfoStatusWait(t *testing.T) {
	npu, s := newTestSim(t, 1, 400*time.Millisecond)
	path := tableFor(t, "initializing", 0)
	onDevice(t, npu, 0, func() {
		start := time.Now()
		_, err := s.CommInitClusterInfo(path, 0)
		require.Equal(t, hccl.ETimeout, hccl.ResultOf(err), "%v", err)
		require.GreaterOrEqual(t, time.Since(start), 400*time.Millisecond)
		require.Contains(t, err.Error(), path)
		require.Contains(t, err.Error(), `"initializing"`)
	})
}

// TestClusterInfoDevice: the thread's device must be the rank's
// (HCCL_E_UNAVAIL, topoinfo_ranktableConcise.cc:176-189).
func TestClusterInfoDevice(t *testing.T) {
	npu, s := newTestSim(t, 2, 2*time.Second)
	path := tableFor(t, "completed", 1)
	onDevice(t, npu, 0, func() {
		_, err := s.CommInitClusterInfo(path, 0)
		require.Equal(t, hccl.EUnavail, hccl.ResultOf(err), "%v", err)
	})
	onDevice(t, npu, 1, func() {
		h, err := s.CommInitClusterInfo(path, 0)
		require.NoError(t, err)
		require.NoError(t, s.CommDestroy(h))
	})
}

// TestClusterInfoNoRank0: rank 1 alone waits for rank 0's handoff and
// gives HCCL_E_TIMEOUT saying so.
func TestClusterInfoNoRank0(t *testing.T) {
	npu, s := newTestSim(t, 2, 300*time.Millisecond)
	path := tableFor(t, "completed", 0, 1)
	onDevice(t, npu, 1, func() {
		_, err := s.CommInitClusterInfo(path, 1)
		require.Equal(t, hccl.ETimeout, hccl.ResultOf(err), "%v", err)
		require.Contains(t, err.Error(), "rank 0 did not publish")
	})
}

// TestClusterInfoKeying: the key and handoff files are private; a handoff
// opens only under the same job key and the same table bytes; a job
// directory or key others can read is refused.
func TestClusterInfoKeying(t *testing.T) {
	npu, s := newTestSim(t, 2, 5*time.Second)
	path := tableFor(t, "completed", 0, 1)
	var wg sync.WaitGroup
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			onDevice(t, npu, int32(r), func() {
				h, err := s.CommInitClusterInfo(path, uint32(r))
				require.NoError(t, err)
				require.NoError(t, s.CommDestroy(h))
			})
		}()
	}
	wg.Wait()
	dir := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".hcclsim")
	st, err := os.Stat(dir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), st.Mode().Perm())
	st, err = os.Stat(filepath.Join(dir, "key"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "only the key stays: the handoff is removed once the world formed")

	key, err := jobKey(dir)
	require.NoError(t, err)
	var digest, other [32]byte
	other[0] = 1
	mk := func(k []byte, d [32]byte) *handoff {
		return &handoff{file: filepath.Join(dir, "world-test"), key: derive(k, "hcclsim rank table seal", d), seen: "test"}
	}
	var root [rootInfoBytes]byte
	root = rootInfo{id: newWorldID(), pid: 1, secret: newSecret(), addr: "127.0.0.1:1"}.encode() // pid 1 is alive
	require.NoError(t, mk(key, digest).publish(dir, root[:]))
	st, err = os.Stat(filepath.Join(dir, "world-test"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	got, _, err := mk(key, digest).open(nil)
	require.NoError(t, err)
	require.Equal(t, root[:], got)
	_, _, err = mk(key, other).open(nil) // another table's bytes
	require.Error(t, err)
	wrong := append([]byte(nil), key...)
	wrong[0] ^= 1
	_, _, err = mk(wrong, digest).open(nil) // the table without the job key
	require.Error(t, err)

	// A handoff whose rank 0 has exited is stale.
	root = rootInfo{id: newWorldID(), pid: 1 << 22, secret: newSecret(), addr: "127.0.0.1:1"}.encode()
	require.NoError(t, mk(key, digest).publish(dir, root[:]))
	_, _, err = mk(key, digest).open(nil)
	require.ErrorContains(t, err, "exited")

	require.NoError(t, os.Chmod(filepath.Join(dir, "key"), 0o644))
	_, err = jobKey(dir)
	require.ErrorContains(t, err, "group or others")
	require.NoError(t, os.Chmod(dir, 0o750))
	_, err = jobDir(path)
	require.ErrorContains(t, err, "group or others")
	t.Setenv(EnvJobDir, filepath.Join(t.TempDir(), "absent"))
	_, err = jobDir(path)
	require.Error(t, err)
}
