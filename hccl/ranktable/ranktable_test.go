package ranktable

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/hccl"
)

const v10 = `{"version": "1.0", "server_count": "2", "server_list": [
 {"server_id": "s0", "device": [{"device_id": "1", "device_ip": "10.1.0.1", "rank_id": "2"}, {"device_id": "0", "device_ip": "10.1.0.0", "rank_id": "0"}]},
 {"server_id": "s1", "host_ip": "10.9.0.1", "device": [{"device_id": "7", "device_ip": "10.1.1.7", "rank_id": "1"}]}],
 "status": "completed"}`

const v12 = `{"version": "1.2", "server_count": "1", "server_list": [
 {"server_id": "n0", "host_ip": "10.0.0.1", "device": [{"device_id": "0", "device_ip": "10.1.0.0", "super_device_id": "5", "rank_id": "0"},
  {"device_id": "1", "device_ip": "10.1.0.1", "super_device_id": "6", "rank_id": "1"}]}],
 "super_pod_list": [{"super_pod_id": "p0", "server_list": [{"server_id": "n0"}]}], "status": "completed"}`

// TestParse reads both versions: ranks sorted by rank id with their
// device, server, IPs and super pod.
func TestParse(t *testing.T) {
	tab, err := Parse([]byte(v10), Options{})
	require.NoError(t, err)
	require.Equal(t, "1.0", tab.Version)
	require.Equal(t, 2, tab.ServerCount)
	require.Equal(t, 3, tab.Size())
	require.NoError(t, tab.Check(2))
	want := []Rank{
		{ID: 0, Device: 0, DeviceIPs: []string{"10.1.0.0"}, ServerID: "s0", SuperDeviceID: -1},
		{ID: 1, Device: 7, DeviceIPs: []string{"10.1.1.7"}, ServerID: "s1", ServerIndex: 1, HostIP: "10.9.0.1", SuperDeviceID: -1},
		{ID: 2, Device: 1, DeviceIPs: []string{"10.1.0.1"}, ServerID: "s0", SuperDeviceID: -1},
	}
	require.Equal(t, want, tab.Ranks)

	tab, err = Parse([]byte(v12), Options{})
	require.NoError(t, err)
	require.Equal(t, "1.2", tab.Version)
	require.Equal(t, 1, tab.SuperPods)
	require.Equal(t, int64(6), tab.Ranks[1].SuperDeviceID)
	require.Equal(t, "p0", tab.Ranks[1].SuperPodID)
	require.Equal(t, "10.0.0.1", tab.Ranks[0].HostIP)
}

// TestRules: every refusal with the code HCCL's parser gives (the lines
// are in doc comments and docs/misuse.md).
func TestRules(t *testing.T) {
	sub := func(from, to string) string {
		require.Contains(t, v10, from)
		return strings.Replace(v10, from, to, 1)
	}
	for _, tc := range []struct {
		name, table string
		want        hccl.Result
	}{
		{"malformed", `{"version": "1.0",`, hccl.EPara},
		{"not an object", `[1, 2]`, hccl.EPara},
		{"null", `null`, hccl.EPara},
		{"no status", sub(`,
 "status": "completed"`, ""), hccl.ENotFound},
		{"status a number", sub(`"completed"`, `7`), hccl.EPara},
		{"status initializing", sub(`"completed"`, `"initializing"`), hccl.ETimeout},
		{"no version (Standard format)", sub(`"version": "1.0", `, ""), hccl.ENotSupport},
		{"version 1.1", sub(`"1.0"`, `"1.1"`), hccl.ENotSupport},
		{"version 3", sub(`"1.0"`, `"3"`), hccl.ENotSupport},
		{"version a number", sub(`"1.0"`, `1.0`), hccl.EPara},
		{"no server_list", `{"version": "1.0", "status": "completed"}`, hccl.ENotFound},
		{"server_list empty", `{"version": "1.0", "server_list": [], "status": "completed"}`, hccl.EPara},
		{"server_list not a list", `{"version": "1.0", "server_list": 3, "status": "completed"}`, hccl.EPara},
		{"server_count mismatch", sub(`"server_count": "2"`, `"server_count": "3"`), hccl.EPara},
		{"server_count not a number", sub(`"server_count": "2"`, `"server_count": "two"`), hccl.EPara},
		{"server_id missing", sub(`"server_id": "s1", `, ""), hccl.ENotFound},
		{"server_id empty", sub(`"server_id": "s1"`, `"server_id": ""`), hccl.EPara},
		{"server_id too long", sub(`"server_id": "s1"`, `"server_id": "`+strings.Repeat("x", 65)+`"`), hccl.EPara},
		{"server_id repeated", sub(`"server_id": "s1"`, `"server_id": "s0"`), hccl.EPara},
		{"host_ip not an address", sub(`"10.9.0.1"`, `"ten"`), hccl.EPara},
		{"device missing", sub(`"device": [{"device_id": "7", "device_ip": "10.1.1.7", "rank_id": "1"}]`, `"x": 1`), hccl.ENotFound},
		{"device empty", sub(`[{"device_id": "7", "device_ip": "10.1.1.7", "rank_id": "1"}]`, `[]`), hccl.EPara},
		{"rank_id missing", sub(`, "rank_id": "1"`, ""), hccl.ENotFound},
		{"rank_id a number", sub(`"rank_id": "1"`, `"rank_id": 1`), hccl.EPara},
		{"rank_id not decimal", sub(`"rank_id": "1"`, `"rank_id": "one"`), hccl.EPara},
		{"rank_id above u32", sub(`"rank_id": "1"`, `"rank_id": "4294967296"`), hccl.EPara},
		{"rank_id negative", sub(`"rank_id": "1"`, `"rank_id": "-1"`), hccl.EPara},
		{"device_id missing", sub(`"device_id": "7", `, ""), hccl.ENotFound},
		{"device_id 16", sub(`"device_id": "7"`, `"device_id": "16"`), hccl.EPara},
		{"device_id not decimal", sub(`"device_id": "7"`, `"device_id": "x7"`), hccl.EPara},
		{"device_ip missing past one server", sub(`, "device_ip": "10.1.1.7"`, ""), hccl.EPara},
		{"device_ip repeated", sub(`"10.1.1.7"`, `"10.1.0.0"`), hccl.EPara},
		{"device_ip not an address", sub(`"10.1.1.7"`, `"10.1.1"`), hccl.EPara},
		{"device_ip counts differ", sub(`"10.1.1.7"`, `"10.1.1.7,10.1.1.8"`), hccl.EPara},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.table), Options{})
			require.Error(t, err)
			require.Equal(t, tc.want, hccl.ResultOf(err), "%v", err)
		})
	}
	// Version 1.2: super pods.
	sub12 := func(from, to string) string {
		require.Contains(t, v12, from)
		return strings.Replace(v12, from, to, 1)
	}
	for _, tc := range []struct {
		name, table string
		want        hccl.Result
	}{
		{"super_device_id not decimal", sub12(`"super_device_id": "6"`, `"super_device_id": "z"`), hccl.EPara},
		{"super_pod_id empty", sub12(`"super_pod_id": "p0"`, `"super_pod_id": ""`), hccl.EPara},
		{"super pod names an unknown server", sub12(`[{"server_id": "n0"}]}]`, `[{"server_id": "n9"}]}]`), hccl.EPara},
		{"super pod without server_list", sub12(`, "server_list": [{"server_id": "n0"}]}]`, `}]`), hccl.ENotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.table), Options{})
			require.Equal(t, tc.want, hccl.ResultOf(err), "%v", err)
		})
	}
	// Without a super_pod_list a 1.2 table is read (HCCL: optional).
	_, err := Parse([]byte(strings.Replace(v12, `"super_pod_list": [{"super_pod_id": "p0", "server_list": [{"server_id": "n0"}]}], `, "", 1)), Options{})
	require.NoError(t, err)
	// A one-server table needs no device_ip.
	_, err = Parse([]byte(`{"version": "1.0", "server_list": [{"server_id": "a", "device": [{"device_id": "0", "rank_id": "0"}]}], "status": "completed"}`), Options{})
	require.NoError(t, err)
	// MaxDevices 8 (older Ascend 910): device 7 is the last.
	_, err = Parse([]byte(strings.Replace(v10, `"device_id": "7"`, `"device_id": "8"`, 1)), Options{MaxDevices: 8})
	require.Equal(t, hccl.EPara, hccl.ResultOf(err))
}

// TestCheck: the rank argument against the sorted rank list, in HCCL's
// order: outside the table (PARA), its own slot holding another id
// (UNAVAIL), another slot out of place (PARA).
func TestCheck(t *testing.T) {
	tab := func(ids ...int) *Table {
		t := &Table{}
		for _, id := range ids {
			t.Ranks = append(t.Ranks, Rank{ID: id})
		}
		return t
	}
	for _, tc := range []struct {
		ids  []int
		rank int
		want hccl.Result
	}{
		{[]int{0, 1, 2}, 1, hccl.Success},
		{[]int{0, 1, 2}, 3, hccl.EPara},
		{[]int{0, 1, 2}, -1, hccl.EPara},
		{[]int{0, 0, 1}, 1, hccl.EUnavail},
		{[]int{0, 0, 1}, 0, hccl.EPara},
		{[]int{0, 2}, 1, hccl.EUnavail},
		{[]int{0, 2}, 0, hccl.EPara},
		{[]int{1, 2}, 0, hccl.EUnavail},
	} {
		require.Equal(t, tc.want, hccl.ResultOf(tab(tc.ids...).Check(tc.rank)), "ids %v rank %d", tc.ids, tc.rank)
	}
}

// TestStoul follows std::stoull and the u32 bound of SalStrToULong.
func TestStoul(t *testing.T) {
	for in, want := range map[string]uint64{"0": 0, "42": 42, " 7": 7, "+3": 3, "12abc": 12, "4294967295": 1<<32 - 1, "-0": 0} {
		got, ok := stoul(in)
		require.True(t, ok, in)
		require.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "x", "-1", "4294967296", "99999999999999999999999", " ", "+"} {
		_, ok := stoul(in)
		require.False(t, ok, in)
	}
}

// TestLoad: path checks, the wait for "completed" (success when the file
// is rewritten in time, HCCL_E_TIMEOUT naming file and status when not),
// and the size bound.
func TestLoad(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	_, err := Load(ctx, "", LoadOptions{})
	require.Equal(t, hccl.EPara, hccl.ResultOf(err))
	_, err = Load(ctx, filepath.Join(dir, "table.txt"), LoadOptions{})
	require.Equal(t, hccl.EInternal, hccl.ResultOf(err))
	_, err = Load(ctx, filepath.Join(dir, "absent.json"), LoadOptions{})
	require.Equal(t, hccl.EPara, hccl.ResultOf(err))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "d.json"), 0o755))
	_, err = Load(ctx, filepath.Join(dir, "d.json"), LoadOptions{})
	require.Equal(t, hccl.EPara, hccl.ResultOf(err))

	path := filepath.Join(dir, "hccl.json")
	initializing := strings.Replace(v10, `"completed"`, `"initializing"`, 1)
	require.NoError(t, os.WriteFile(path, []byte(initializing), 0o644))
	start := time.Now()
	_, err = Load(ctx, path, LoadOptions{Wait: 300 * time.Millisecond, Poll: 20 * time.Millisecond})
	require.Equal(t, hccl.ETimeout, hccl.ResultOf(err))
	require.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond)
	require.Contains(t, err.Error(), path)
	require.Contains(t, err.Error(), `"initializing"`)

	go func() {
		time.Sleep(100 * time.Millisecond)
		_ = os.WriteFile(path+".new", []byte(v10), 0o644)
		_ = os.Rename(path+".new", path)
	}()
	tab, err := Load(ctx, path, LoadOptions{Wait: 10 * time.Second, Poll: 20 * time.Millisecond})
	require.NoError(t, err)
	require.Equal(t, 3, tab.Size())

	// A malformed file fails at once, without waiting.
	require.NoError(t, os.WriteFile(path, []byte(`{"status": `), 0o644))
	start = time.Now()
	_, err = Load(ctx, path, LoadOptions{Wait: 10 * time.Second})
	require.Equal(t, hccl.EPara, hccl.ResultOf(err))
	require.Less(t, time.Since(start), 5*time.Second)

	// The context ends the wait.
	require.NoError(t, os.WriteFile(path, []byte(initializing), 0o644))
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err = Load(cctx, path, LoadOptions{Wait: time.Minute})
	require.Equal(t, hccl.ETimeout, hccl.ResultOf(err))

	// Larger than MaxFileBytes: refused before parsing.
	big := filepath.Join(dir, "big.json")
	f, err := os.Create(big)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(MaxFileBytes+1))
	require.NoError(t, f.Close())
	_, err = Load(ctx, big, LoadOptions{})
	require.Equal(t, hccl.EPara, hccl.ResultOf(err))
	require.Contains(t, err.Error(), fmt.Sprint(MaxFileBytes))
}

// FuzzParse: no input panics; a table that parses has ranks sorted by id.
func FuzzParse(f *testing.F) {
	f.Add([]byte(v10))
	f.Add([]byte(v12))
	f.Fuzz(func(t *testing.T, b []byte) {
		tab, err := Parse(b, Options{})
		if err != nil {
			require.NotEqual(t, hccl.Success, hccl.ResultOf(err))
			return
		}
		for i := 1; i < len(tab.Ranks); i++ {
			require.LessOrEqual(t, tab.Ranks[i-1].ID, tab.Ranks[i].ID)
		}
	})
}
