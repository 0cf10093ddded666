package hcclsim

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/ascend-go/cann/hccl"
)

// CommInitClusterInfo from a rank table file. The fallback forms such a
// communicator among ranks of this process only (one world per file path
// and content); ranks in other processes use root info.

// rankTable is the part of the rank table (version 1.0) the simulator
// reads.
type rankTable struct {
	ServerList []struct {
		Device []struct {
			DeviceID string `json:"device_id"`
			RankID   string `json:"rank_id"`
		} `json:"device"`
	} `json:"server_list"`
}

type clusterRendezvous struct {
	world  *localWorld
	id     [16]byte
	name   string
	joined map[int]bool
	all    chan struct{}
}

var clusters = struct {
	sync.Mutex
	m map[string]*clusterRendezvous
}{m: make(map[string]*clusterRendezvous)}

// CommInitClusterInfo joins rank `rank` of the communicator a rank table
// file describes; it blocks until every rank of the table (in this
// process) has joined, or the connect timeout.
func (s *Sim) CommInitClusterInfo(clusterInfo string, rank uint32) (hccl.CommHandle, error) {
	if s == nil {
		return 0, hccl.NilHandle("HcclCommInitClusterInfo", "hcclsim.Sim")
	}
	const op = "HcclCommInitClusterInfo"
	if s.envErr != nil {
		return 0, herr(op, s.envErr)
	}
	raw, err := os.ReadFile(clusterInfo)
	if err != nil {
		return 0, hccl.Errorf(op, hccl.EOpenFileFailure, "%v", err)
	}
	var tab rankTable
	if err := json.Unmarshal(raw, &tab); err != nil {
		return 0, hccl.Errorf(op, hccl.EPara, "rank table %s: %v", clusterInfo, err)
	}
	devs := map[int]int32{}
	for _, sv := range tab.ServerList {
		for _, d := range sv.Device {
			r, err1 := strconv.Atoi(d.RankID)
			dev, err2 := strconv.Atoi(d.DeviceID)
			if err1 != nil || err2 != nil || r < 0 || dev < 0 {
				return 0, hccl.Errorf(op, hccl.EPara, "rank table %s: rank %q device %q", clusterInfo, d.RankID, d.DeviceID)
			}
			if _, dup := devs[r]; dup {
				return 0, hccl.Errorf(op, hccl.EPara, "rank table %s lists rank %d twice", clusterInfo, r)
			}
			devs[r] = int32(dev)
		}
	}
	n := len(devs)
	for r := 0; r < n; r++ {
		if _, ok := devs[r]; !ok {
			return 0, hccl.Errorf(op, hccl.EPara, "rank table %s: rank ids are not 0..%d", clusterInfo, n-1)
		}
	}
	if int(rank) >= n {
		return 0, hccl.Errorf(op, hccl.EPara, "rank %d, the table has %d", rank, n)
	}
	dev := devs[int(rank)]
	if cur, err := s.env.currentDevice(); err == nil && cur != dev {
		return 0, hccl.Errorf(op, hccl.EPara, "rank %d is device %d in the table, the thread's device is %d", rank, dev, cur)
	}
	abs, _ := filepath.Abs(clusterInfo)
	sum := sha256.Sum256(raw)
	key := abs + "\x00" + string(sum[:])

	clusters.Lock()
	cr := clusters.m[key]
	if cr == nil {
		id := newWorldID()
		cr = &clusterRendezvous{world: newLocalWorld(n), id: id, name: fmt.Sprintf("hcclsim_rt_%x", id[:8]),
			joined: map[int]bool{}, all: make(chan struct{})}
		clusters.m[key] = cr
	}
	if cr.joined[int(rank)] {
		clusters.Unlock()
		return 0, hccl.Errorf(op, hccl.EPara, "rank %d joined twice", rank)
	}
	cr.joined[int(rank)] = true
	c := s.newComm(cr.world, cr.id, n, int(rank), dev, cr.name, s.opts.ExecTimeout)
	cr.world.mu.Lock()
	cr.world.comms[rank] = c
	cr.world.mu.Unlock()
	if len(cr.joined) == n {
		close(cr.all)
		delete(clusters.m, key)
	}
	clusters.Unlock()

	t := time.NewTimer(s.opts.ConnectTimeout)
	defer t.Stop()
	select {
	case <-cr.all:
		return hccl.CommHandle(s.register(c)), nil
	case <-t.C:
		clusters.Lock()
		select {
		case <-cr.all:
			clusters.Unlock()
			return hccl.CommHandle(s.register(c)), nil
		default:
		}
		delete(cr.joined, int(rank))
		if len(cr.joined) == 0 && clusters.m[key] == cr {
			delete(clusters.m, key)
		}
		clusters.Unlock()
		return 0, hccl.Errorf(op, hccl.ETimeout, "not all %d ranks of %s joined within %v", n, clusterInfo, s.opts.ConnectTimeout)
	}
}
