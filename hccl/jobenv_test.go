package hccl_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/fallback/hcclsim"
	"github.com/ascend-go/cann/hccl"
)

func setJobEnv(t *testing.T, kv map[string]string) {
	for _, k := range []string{hccl.EnvRankTableFile, hccl.EnvRankID, hccl.EnvRankSize, hccl.EnvDeviceID, hccl.EnvAscendDeviceID} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	for k, v := range kv {
		t.Setenv(k, v)
	}
}

// TestReadJobEnv: the launch variables, which are required, and each
// malformed value refused with HCCL_E_PARA naming the variable.
func TestReadJobEnv(t *testing.T) {
	setJobEnv(t, map[string]string{"RANK_TABLE_FILE": "/x/hccl.json", "RANK_ID": "3", "RANK_SIZE": "8", "DEVICE_ID": "5"})
	e, err := hccl.ReadJobEnv()
	require.NoError(t, err)
	require.Equal(t, hccl.JobEnv{RankTableFile: "/x/hccl.json", RankID: 3, RankSize: 8, DeviceID: 5}, e)

	setJobEnv(t, map[string]string{"RANK_TABLE_FILE": "t.json", "RANK_ID": "0", "ASCEND_DEVICE_ID": "2"})
	e, err = hccl.ReadJobEnv()
	require.NoError(t, err)
	require.Equal(t, int32(2), e.DeviceID)
	require.Equal(t, 0, e.RankSize)

	for name, kv := range map[string]map[string]string{
		"RANK_TABLE_FILE": {"RANK_ID": "0", "DEVICE_ID": "0"},
		"RANK_ID":         {"RANK_TABLE_FILE": "t.json", "DEVICE_ID": "0"},
		"RANK_ID=":        {"RANK_TABLE_FILE": "t.json", "RANK_ID": "-1", "DEVICE_ID": "0"},
		"RANK_SIZE=":      {"RANK_TABLE_FILE": "t.json", "RANK_ID": "2", "RANK_SIZE": "2", "DEVICE_ID": "0"},
		"DEVICE_ID=":      {"RANK_TABLE_FILE": "t.json", "RANK_ID": "0", "DEVICE_ID": "x"},
		"DEVICE_ID":       {"RANK_TABLE_FILE": "t.json", "RANK_ID": "0"},
		"disagree":        {"RANK_TABLE_FILE": "t.json", "RANK_ID": "0", "DEVICE_ID": "1", "ASCEND_DEVICE_ID": "2"},
	} {
		setJobEnv(t, kv)
		_, err := hccl.ReadJobEnv()
		require.Equal(t, hccl.EPara, hccl.ResultOf(err), name)
		if name != "disagree" {
			require.Contains(t, err.Error(), name[:len(name)-len(filepathSuffix(name))], name)
		}
	}
}

func filepathSuffix(s string) string {
	if s[len(s)-1] == '=' {
		return "="
	}
	return ""
}

// TestInitFromEnv starts two ranks from the environment's rank table on
// the fallback (as goroutines here; examples/cluster runs them as
// processes) and checks the communicator; a RANK_SIZE the table does not
// have is HCCL_E_PARA.
func TestInitFromEnv(t *testing.T) {
	npu, err := fallback.New(fallback.WithDevices(2), fallback.WithDeviceMemory(8<<20))
	require.NoError(t, err)
	t.Cleanup(func() { _ = npu.Close() })
	rt, err := acl.Init(npu, "")
	require.NoError(t, err)
	t.Cleanup(func() { _ = rt.Close() })
	sim := hcclsim.New(npu, hcclsim.Options{ConnectTimeout: 10 * time.Second, ExecTimeout: 10 * time.Second})
	t.Cleanup(func() { _ = sim.Close() })
	path := filepath.Join(t.TempDir(), "hccl.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"version": "1.0", "server_list": [{"server_id": "s", "device": [
		{"device_id": "1", "rank_id": "0"}]}], "status": "completed"}`), 0o644))
	// One rank: the environment is per process, so one rank per test.
	setJobEnv(t, map[string]string{"RANK_TABLE_FILE": path, "RANK_ID": "0", "RANK_SIZE": "1", "DEVICE_ID": "1"})
	job, err := hccl.InitFromEnv(rt, sim)
	require.NoError(t, err)
	require.Equal(t, 1, job.Comm.Size())
	require.Equal(t, 0, job.Comm.Rank())
	require.Equal(t, int32(1), job.Device.ID())
	require.NoError(t, job.Close())
	require.NoError(t, job.Close())
	require.Zero(t, sim.Live())

	t.Setenv("RANK_SIZE", "4")
	_, err = hccl.InitFromEnv(rt, sim)
	require.Equal(t, hccl.EPara, hccl.ResultOf(err))
	require.ErrorContains(t, err, "RANK_SIZE=4")
	require.Zero(t, sim.Live())

	// The table's device is not DEVICE_ID's: HCCL_E_UNAVAIL.
	t.Setenv("RANK_SIZE", "")
	t.Setenv("DEVICE_ID", "0")
	_, err = hccl.InitFromEnv(rt, sim)
	require.Equal(t, hccl.EUnavail, hccl.ResultOf(err))
}
