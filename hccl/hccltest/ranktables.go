package hccltest

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ascend-go/cann/hccl"
)

// rankTableJSON writes a rank table: servers of devices, version 1.0 or
// 1.2 (1.2 adds super_device_id, host_ip and a super pod of every
// server).
func rankTableJSON(version string, servers [][]int32) string {
	var sv, pod []string
	rank := 0
	for s, devs := range servers {
		var ds []string
		for _, d := range devs {
			x := fmt.Sprintf(`{"device_id": "%d", "device_ip": "192.168.%d.%d", "rank_id": "%d"`, d, 100+s, 10+rank, rank)
			if version == "1.2" {
				x += fmt.Sprintf(`, "super_device_id": "%d"`, rank)
			}
			ds = append(ds, x+"}")
			rank++
		}
		host := ""
		if version == "1.2" {
			host = fmt.Sprintf(`, "host_ip": "10.0.0.%d"`, s+1)
		}
		sv = append(sv, fmt.Sprintf(`{"server_id": "10.0.0.%d"%s, "device": [%s]}`, s+1, host, strings.Join(ds, ", ")))
		pod = append(pod, fmt.Sprintf(`{"server_id": "10.0.0.%d"}`, s+1))
	}
	t := fmt.Sprintf(`{"version": "%s", "server_count": "%d", "server_list": [%s]`, version, len(servers), strings.Join(sv, ", "))
	if version == "1.2" {
		t += `, "super_pod_list": [{"super_pod_id": "0", "server_list": [` + strings.Join(pod, ", ") + `]}]`
	}
	return t + `, "status": "completed"}`
}

// writeTable writes content to a new file name in a fresh directory.
func writeTable(t testing.TB, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// testClusterInfo is the rank-table group: communicators formed from a
// table of each version, with a config, twice from one table, and the
// parser's refusals with HCCL's codes (docs/misuse.md, "Rank tables").
func (s *suite) testClusterInfo(t *testing.T) {
	n := min(3, s.maxRanks)
	for _, version := range []string{"1.0", "1.2"} {
		t.Run("Form/version="+version, func(t *testing.T) {
			g := s.newGroup(t, n)
			// Two servers when there are enough ranks: device_ip is then
			// required and checked.
			servers := [][]int32{nil}
			for i, w := range g.ws {
				if i == n-1 && n > 1 {
					servers = append(servers, nil)
				}
				servers[len(servers)-1] = append(servers[len(servers)-1], w.dev)
			}
			path := writeTable(t, "rank_table.json", rankTableJSON(version, servers))
			errs := g.each(func(w *worker) error {
				h, err := g.b.CommInitClusterInfo(path, uint32(w.rank))
				if err == nil {
					w.comm = h
				}
				return err
			})
			s.unsupported(t, ClusterInfo, errs[0])
			g.noErr("CommInitClusterInfo", errs)
			g.checkQueries(t, "")
			g.allReduceCheck(t, uint64(s.seed))
			g.noErr("CommDestroy", g.destroy())
		})
	}
	t.Run("Config", func(t *testing.T) {
		g := s.newGroup(t, n)
		var devs []int32
		for _, w := range g.ws {
			devs = append(devs, w.dev)
		}
		path := writeTable(t, "rank_table.json", rankTableJSON("1.0", [][]int32{devs}))
		cb, ok := g.b.(hccl.ClusterInfoConfigBackend)
		if !ok {
			t.Fatalf("backend %s has no CommInitClusterInfoConfig", g.b.Name())
		}
		name := fmt.Sprintf("hccltest_rt_%d", s.seed&0xffff)
		errs := g.each(func(w *worker) error {
			cfg := hccl.NewCommConfig()
			if err := cfg.SetCommName(name); err != nil {
				return err
			}
			h, err := cb.CommInitClusterInfoConfig(path, uint32(w.rank), cfg)
			if err == nil {
				w.comm = h
			}
			return err
		})
		s.unsupported(t, ClusterInfo, errs[0])
		g.noErr("CommInitClusterInfoConfig", errs)
		g.checkQueries(t, name)
		g.noErr("CommDestroy", g.destroy())
		errs = g.some([]int{0}, func(w *worker) error {
			_, err := cb.CommInitClusterInfoConfig(path, 0, nil)
			return err
		})
		code(t, hccl.EPtr, errs[0], "CommInitClusterInfoConfig with a null config")
	})
	t.Run("Twice", func(t *testing.T) {
		// Two communicators in a row from one table: each forms anew.
		g := s.newGroup(t, n)
		var devs []int32
		for _, w := range g.ws {
			devs = append(devs, w.dev)
		}
		path := writeTable(t, "rank_table.json", rankTableJSON("1.0", [][]int32{devs}))
		for round := 0; round < 2; round++ {
			errs := g.each(func(w *worker) error {
				h, err := g.b.CommInitClusterInfo(path, uint32(w.rank))
				if err == nil {
					w.comm = h
				}
				return err
			})
			s.unsupported(t, ClusterInfo, errs[0])
			g.noErr(fmt.Sprintf("CommInitClusterInfo, round %d", round), errs)
			g.allReduceCheck(t, uint64(s.seed)+uint64(round))
			g.noErr("CommDestroy", g.destroy())
		}
	})
	t.Run("Rules", s.testRankTableRules)
}

// allReduceCheck sums random int32 vectors over the group's communicators
// and compares every rank's result with the sum computed here.
func (g *group) allReduceCheck(t *testing.T, seed uint64) {
	t.Helper()
	const count = 257
	rng := rand.New(rand.NewPCG(seed, 27))
	ins := make([][]byte, len(g.ws))
	want := make([]int32, count)
	for r := range ins {
		ins[r] = make([]byte, 4*count)
		for i := 0; i < count; i++ {
			v := int32(rng.IntN(1<<20)) - 1<<19
			binary.LittleEndian.PutUint32(ins[r][4*i:], uint32(v))
			want[i] += v
		}
	}
	g.noErr("AllReduce", g.each(func(w *worker) error {
		buf, err := w.buffer(ins[w.rank], 4*count)
		if err != nil {
			return err
		}
		defer w.free(buf)
		if err := g.b.AllReduce(buf, buf, count, hccl.Int32, hccl.Sum, w.comm, w.r.Stream()); err != nil {
			return err
		}
		if err := w.r.Sync(); err != nil {
			return err
		}
		got, err := w.read(buf, 4*count)
		if err != nil {
			return err
		}
		for i := 0; i < count; i++ {
			if v := int32(binary.LittleEndian.Uint32(got[4*i:])); v != want[i] {
				return fmt.Errorf("rank %d element %d = %d, want %d", w.rank, i, v, want[i])
			}
		}
		return nil
	}))
}

// rankTableRule is a table HCCL refuses, the rank that asks, and the code
// its parser returns.
type rankTableRule struct {
	name  string
	file  string // file name (default rank_table.json); "" content: not written
	body  func(dev int32) string
	rank  uint32
	want  hccl.Result
	where string // source of the rule (docs/misuse.md has the full list)
}

func one(dev int32, rank string, extra string) string {
	return fmt.Sprintf(`{"version": "1.0", "server_count": "1", "server_list": [{"server_id": "s0", "device": [{"device_id": "%d", "rank_id": "%s"%s}]}], "status": "completed"}`, dev, rank, extra)
}

func ranks(dev int32, ids ...string) string {
	var ds []string
	for _, id := range ids {
		ds = append(ds, fmt.Sprintf(`{"device_id": "%d", "rank_id": "%s"}`, dev, id))
	}
	return `{"version": "1.0", "server_count": "1", "server_list": [{"server_id": "s0", "device": [` + strings.Join(ds, ", ") + `]}], "status": "completed"}`
}

var rankTableRules = []rankTableRule{
	{name: "malformed_json", body: func(d int32) string { return `{"version": "1.0", "server_list": [` }, want: hccl.EPara,
		where: "topoinfo_ranktableParser.cc:186-193"},
	{name: "no_status", body: func(d int32) string { return strings.Replace(one(d, "0", ""), `, "status": "completed"`, "", 1) },
		want: hccl.ENotFound, where: "topoinfo_ranktableParser.cc:307-312"},
	{name: "status_not_string", body: func(d int32) string { return strings.Replace(one(d, "0", ""), `"completed"`, "1", 1) },
		want: hccl.EPara, where: "topoinfo_ranktableParser.cc:336-345"},
	{name: "unknown_version", body: func(d int32) string { return strings.Replace(one(d, "0", ""), `"1.0"`, `"2.0"`, 1) },
		want: hccl.ENotSupport, where: "config.cc:52-60"},
	{name: "no_server_list", body: func(d int32) string { return `{"version": "1.0", "status": "completed"}` },
		want: hccl.ENotFound, where: "topoinfo_ranktableConcise.cc:230"},
	{name: "server_count_mismatch", body: func(d int32) string {
		return strings.Replace(one(d, "0", ""), `"server_count": "1"`, `"server_count": "2"`, 1)
	},
		want: hccl.EPara, where: "topoinfo_ranktableConcise.cc:241-250"},
	{name: "no_devices", body: func(d int32) string {
		return `{"version": "1.0", "server_list": [{"server_id": "s0", "device": []}], "status": "completed"}`
	}, want: hccl.EPara, where: "topoinfo_ranktableConcise.cc:341"},
	{name: "device_id_out_of_range", body: func(d int32) string {
		return strings.Replace(one(d, "0", ""), fmt.Sprintf(`"device_id": "%d"`, d), `"device_id": "99"`, 1)
	},
		want: hccl.EPara, where: "topoinfo_ranktableConcise.cc:425-444"},
	{name: "rank_id_not_a_number", body: func(d int32) string { return one(d, "x", "") }, want: hccl.EPara,
		where: "topoinfo_ranktableConcise.cc:459-467"},
	{name: "no_rank_id", body: func(d int32) string { return strings.Replace(one(d, "0", ""), `, "rank_id": "0"`, "", 1) },
		want: hccl.ENotFound, where: "topoinfo_ranktableParser.cc:383-387"},
	{name: "duplicate_device_ip", body: func(d int32) string {
		return fmt.Sprintf(`{"version": "1.0", "server_list": [{"server_id": "s0", "device": [{"device_id": "%d", "device_ip": "192.168.1.1", "rank_id": "0"}, {"device_id": "%d", "device_ip": "192.168.1.1", "rank_id": "1"}]}], "status": "completed"}`, d, d)
	}, want: hccl.EPara, where: "topoinfo_ranktableConcise.cc:553-557"},
	{name: "duplicate_server_id", body: func(d int32) string {
		dev := fmt.Sprintf(`"device_id": "%d"`, d)
		return `{"version": "1.0", "server_list": [{"server_id": "s0", "device": [{` + dev + `, "device_ip": "192.168.1.1", "rank_id": "0"}]}, {"server_id": "s0", "device": [{` + dev + `, "device_ip": "192.168.1.2", "rank_id": "1"}]}], "status": "completed"}`
	}, want: hccl.EPara, where: "topoinfo_ranktableConcise.cc:305-306"},
	{name: "rank_outside_table", body: func(d int32) string { return one(d, "0", "") }, rank: 1, want: hccl.EPara,
		where: "topoinfo_ranktableConcise.cc:143-152"},
	{name: "duplicate_rank_id/own_slot", body: func(d int32) string { return ranks(d, "0", "0") }, rank: 1, want: hccl.EUnavail,
		where: "topoinfo_ranktableConcise.cc:154-165"},
	{name: "duplicate_rank_id/other_slot", body: func(d int32) string { return ranks(d, "0", "0") }, rank: 0, want: hccl.EPara,
		where: "config.cc:359-378"},
	{name: "rank_gap/own_slot", body: func(d int32) string { return ranks(d, "0", "2") }, rank: 1, want: hccl.EUnavail,
		where: "topoinfo_ranktableConcise.cc:154-165"},
	{name: "rank_gap/other_slot", body: func(d int32) string { return ranks(d, "0", "2") }, rank: 0, want: hccl.EPara,
		where: "config.cc:359-378"},
	{name: "not_json_suffix", file: "rank_table.txt", body: func(d int32) string { return one(d, "0", "") }, want: hccl.EInternal,
		where: "topoinfo_ranktableParser.cc:155-160"},
	{name: "missing_file", file: "absent.json", want: hccl.EPara, where: "topoinfo_ranktableParser.cc:162-168"},
}

// testRankTableRules has one rank present each table HCCL refuses and
// checks the code of the refusal.
func (s *suite) testRankTableRules(t *testing.T) {
	g := s.newGroup(t, 1)
	for _, rule := range rankTableRules {
		t.Run(rule.name, func(t *testing.T) {
			file := rule.file
			if file == "" {
				file = "rank_table.json"
			}
			path := filepath.Join(t.TempDir(), file)
			if rule.body != nil {
				if err := os.WriteFile(path, []byte(rule.body(g.ws[0].dev)), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			errs := g.some([]int{0}, func(w *worker) error {
				h, err := g.b.CommInitClusterInfo(path, rule.rank)
				if err == nil {
					_ = g.b.CommDestroy(h)
				}
				return err
			})
			code(t, rule.want, errs[0], "CommInitClusterInfo, rank %d, %s (HCCL: %s)", rule.rank, rule.name, rule.where)
		})
	}
}
