package procs_test

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/fallback/hcclsim/procs"
	"github.com/ascend-go/cann/hccl"
)

func TestMain(m *testing.M) {
	if procs.IsChild() {
		procs.ServeChild()
	}
	os.Exit(m.Run())
}

func start(t *testing.T, n int) *procs.Cluster {
	t.Helper()
	cl, err := procs.Start(procs.Options{Processes: n, Devices: n, ExecTimeout: time.Second, ConnectTimeout: 5 * time.Second,
		Args: []string{"-test.run=^$"}})
	require.NoError(t, err)
	return cl
}

// TestMemoryRoundTrip: a child's device memory written and read back
// through the request pipe; every child is a separate process.
func TestMemoryRoundTrip(t *testing.T) {
	cl := start(t, 2)
	defer func() { require.NoError(t, cl.Close()) }()
	require.NotEqual(t, cl.Proc(0).Pid(), cl.Proc(1).Pid())
	for i := 0; i < cl.Procs(); i++ {
		p := cl.Proc(i)
		s, err := p.OpenRank(int32(i))
		require.NoError(t, err)
		a, err := p.Alloc(4096)
		require.NoError(t, err)
		data := bytes.Repeat([]byte{byte(i + 1), 2, 3}, 1000)
		require.NoError(t, p.Write(a, data))
		got, err := p.Read(a, len(data))
		require.NoError(t, err)
		assert.Equal(t, data, got)
		require.NoError(t, p.Free(a))
		require.NoError(t, p.CloseRank(int32(i), s))
	}
	// Errors keep their type across the pipe.
	err := cl.Proc(0).Free(12345)
	require.Error(t, err)
	_, err = cl.Backend().GetRankSize(0)
	assert.Equal(t, hccl.EPtr, hccl.ResultOf(err))
	_, err = cl.Backend().GetRankSize(hccl.CommHandle(1<<48 | 0x999))
	assert.Equal(t, hccl.EPara, hccl.ResultOf(err))
}

// TestKillAndClose: a killed child makes its calls fail with
// HCCL_E_TIMEOUT; Close still reaps every child and reports no error for
// the one killed on purpose.
func TestKillAndClose(t *testing.T) {
	cl := start(t, 2)
	require.NoError(t, cl.Kill(1))
	_, err := cl.Proc(1).Live()
	for err == nil { // the kill may take a moment to land
		time.Sleep(10 * time.Millisecond)
		_, err = cl.Proc(1).Live()
	}
	assert.Equal(t, hccl.ETimeout, hccl.ResultOf(err))
	n, err := cl.Proc(0).Live()
	require.NoError(t, err)
	assert.Zero(t, n)
	require.NoError(t, cl.Close())
	require.NoError(t, cl.Close(), "Close is idempotent")
}
