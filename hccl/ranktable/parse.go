package ranktable

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net"
	"sort"
	"strings"

	"github.com/ascend-go/cann/hccl"
)

// Version strings HCCL knows (topo/topoinfo_ranktableParser_pub.h:22-24).
const (
	Version10 = "1.0" // HCCL_CLUSTER_VERSION
	Version11 = "1.1" // HETEROG_CLUSTER_VERSION (not read here)
	Version12 = "1.2" // SUPERPOD_CLUSTER_VERSION (A3 super pods)

	// StatusCompleted is the status a table must reach before HCCL reads
	// it (topoinfo_ranktableParser.cc:307-316).
	StatusCompleted = "completed"

	// MaxServerIDLength is SERVERID_MAX_LENGTH
	// (topoinfo_ranktableParser_pub.h:35).
	MaxServerIDLength = 64
	// MaxFileBytes bounds what Load reads: a rank table of 65536 ranks is
	// a few MiB; anything larger is refused before it is parsed.
	MaxFileBytes = 64 << 20
)

// Op is the operation the package's errors name.
const Op = "HcclCommInitClusterInfo"

// Rank is one device of the table, the unit HCCL calls a rank.
type Rank struct {
	ID          int      // rank_id
	Device      int      // device_id: the physical device of the rank's server
	DeviceIPs   []string // device_ip, split at commas; empty when absent (one server only)
	ServerID    string   // server_id of its server
	ServerIndex int      // position of its server in server_list
	HostIP      string   // host_ip of its server, "" when absent
	// SuperDeviceID is super_device_id (version 1.2), -1 when absent.
	SuperDeviceID int64
	// SuperPodID is the super_pod_id whose server_list names the rank's
	// server (version 1.2), "" when none does.
	SuperPodID string
}

// Table is a parsed rank table. Ranks are sorted by ID, as HCCL sorts
// them (topoinfo_ranktableConcise.cc:125-128); Check verifies that they
// are exactly 0..n-1.
type Table struct {
	Version     string
	Status      string
	ServerCount int
	SuperPods   int
	Ranks       []Rank
	// Digest is the SHA-256 of the file's bytes: two processes agree on a
	// table only if they read the same bytes.
	Digest [32]byte
}

// Size is the number of ranks.
func (t *Table) Size() int {
	if t == nil {
		return 0
	}
	return len(t.Ranks)
}

// Options bound what Parse accepts.
type Options struct {
	// MaxDevices is the number of devices a server can have; a device_id
	// at or above it is refused (topoinfo_ranktableConcise.cc:425-444:
	// 16 on 910B/910_93, 8 on older Ascend 910). Zero means 16.
	MaxDevices int
}

func errf(code hccl.Result, format string, args ...any) error {
	return hccl.Errorf(Op, code, format, args...)
}

// object is a JSON object whose members are kept raw, so that a missing
// member (HCCL_E_NOT_FOUND) and one of the wrong type (HCCL_E_PARA) can be
// told apart as HCCL's GetJsonProperty does
// (topoinfo_ranktableParser.cc:318-345).
type object map[string]json.RawMessage

// str returns member name as a string: ok=false when absent; an error
// (HCCL_E_PARA) when present and not a string.
func (o object) str(where, name string) (string, bool, error) {
	raw, ok := o[name]
	if !ok {
		return "", false, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", true, errf(hccl.EPara, "%s%q is %s, not a string", where, name, kind(raw))
	}
	return s, true, nil
}

// need is str for a required member: absent is HCCL_E_NOT_FOUND
// (topoinfo_ranktableParser.cc:318-333, 383-387).
func (o object) need(where, name string) (string, error) {
	s, ok, err := o.str(where, name)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", errf(hccl.ENotFound, "%shas no %q", where, name)
	}
	return s, nil
}

// list returns member name as an array of objects.
func (o object) list(where, name string) ([]object, bool, error) {
	raw, ok := o[name]
	if !ok {
		return nil, false, nil
	}
	var out []object
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, true, errf(hccl.EPara, "%s%q is %s, not a list of objects", where, name, kind(raw))
	}
	return out, true, nil
}

func kind(raw json.RawMessage) string {
	b := bytes.TrimSpace(raw)
	if len(b) == 0 {
		return "empty"
	}
	switch b[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "a list"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// stoul is SalStrToULong (platform/common/sal.cc:185-206): std::stoull
// in base 10 — leading blanks and a sign are accepted, parsing stops at
// the first non-digit, no digit at all is invalid — then anything above
// 0xFFFFFFFF is out of range. Both failures are HCCL_E_PARA.
func stoul(s string) (uint64, bool) {
	i := 0
	for i < len(s) && strings.IndexByte(" \t\n\v\f\r", s[i]) >= 0 {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	start := i
	var v uint64
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		d := uint64(s[i] - '0')
		if v > (1<<64-1-d)/10 {
			return 0, false // stoull: out_of_range
		}
		v = v*10 + d
		i++
	}
	if i == start {
		return 0, false // stoull: invalid_argument
	}
	if neg {
		v = -v // stoull negates in unsigned arithmetic
	}
	return v, v <= 0xFFFFFFFF
}

// head is the part of a table read before its status is "completed":
// HCCL parses the JSON and reads the status on every poll
// (topoinfo_ranktableParser.cc:173-199) and nothing else.
func head(data []byte) (object, string, error) {
	var top object
	if err := json.Unmarshal(data, &top); err != nil || top == nil {
		// ReadFile fails (HCCL_E_INTERNAL) and LoadFile returns
		// HCCL_E_PARA for it (topoinfo_ranktableParser.cc:115-138, 186-193).
		if err == nil {
			err = fmt.Errorf("the top level is null")
		}
		return nil, "", errf(hccl.EPara, "not a JSON object: %v", err)
	}
	// RefreshStatus: "status" is required (topoinfo_ranktableParser.cc:307-312).
	status, err := top.need("", "status")
	if err != nil {
		return nil, "", err
	}
	return top, status, nil
}

// Parse reads a rank table whose status is "completed" with the checks
// HCCL makes while parsing (the rank argument's checks are Check's). A
// status other than "completed" is an HCCL_E_TIMEOUT error here; Load
// waits for it instead.
func Parse(data []byte, opt Options) (*Table, error) {
	top, status, err := head(data)
	if err != nil {
		return nil, err
	}
	if status != StatusCompleted {
		return nil, errf(hccl.ETimeout, "status is %q, not %q", status, StatusCompleted)
	}
	return parseBody(top, status, data, opt)
}

func parseBody(top object, status string, data []byte, opt Options) (*Table, error) {
	maxDev := opt.MaxDevices
	if maxDev <= 0 {
		maxDev = 16
	}
	t := &Table{Status: status, Digest: sha256.Sum256(data)}
	// GetRanktableVersion and the dispatch on it (topoinfo_ranktableParser.cc:293-305,
	// config.cc:43-60).
	v, ok, err := top.str("", "version")
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return nil, errf(hccl.ENotSupport, "no \"version\": HCCL reads it as the old Standard format (group_list), which the fallback does not read; write version 1.0 or 1.2")
	case v == Version11:
		return nil, errf(hccl.ENotSupport, "version 1.1 (heterogeneous clusters) is not read by the fallback")
	case v != Version10 && v != Version12:
		return nil, errf(hccl.ENotSupport, "version %q is not supported (HCCL knows 1.0, 1.1 and 1.2)", v)
	}
	t.Version = v
	u := uniques{}
	if err := t.servers(top, maxDev, u); err != nil {
		return nil, err
	}
	if t.Version == Version12 {
		if err := t.superPods(top, u); err != nil {
			return nil, err
		}
	}
	sort.SliceStable(t.Ranks, func(i, j int) bool { return t.Ranks[i].ID < t.Ranks[j].ID })
	return t, nil
}

// uniques are HCCL's uniqueness pools (topoinfo_ranktableParser.cc:518-560):
// a second server_id, device_ip or super_pod_id is HCCL_E_PARA.
type uniques map[string]map[string]bool

func (u uniques) insert(kind, v string) error {
	if u[kind] == nil {
		u[kind] = map[string]bool{}
	}
	if u[kind][v] {
		return errf(hccl.EPara, "%s %q appears twice", kind, v)
	}
	u[kind][v] = true
	return nil
}

// servers is GetServerList (topoinfo_ranktableConcise.cc:226-281).
func (t *Table) servers(top object, maxDev int, u uniques) error {
	list, ok, err := top.list("", "server_list")
	if err != nil {
		return err
	}
	if !ok {
		return errf(hccl.ENotFound, "has no \"server_list\"")
	}
	if len(list) == 0 { // GetJsonProperty of an object: size 0 (topoinfo_ranktableParser.cc:362-363)
		return errf(hccl.EPara, "\"server_list\" is empty")
	}
	sc, ok, err := top.str("", "server_count")
	if err != nil {
		return err
	}
	t.ServerCount = len(list)
	if ok {
		n, good := stoul(sc)
		if !good {
			return errf(hccl.EPara, "server_count %q is not a number", sc)
		}
		if n != uint64(len(list)) {
			return errf(hccl.EPara, "server_count is %s, server_list has %d servers", sc, len(list))
		}
	}
	for i, sv := range list {
		if err := t.server(sv, i, maxDev, u); err != nil {
			return err
		}
	}
	return nil
}

// server is GetSingleServer and GetDeviceList
// (topoinfo_ranktableConcise.cc:284-364).
func (t *Table) server(sv object, idx, maxDev int, u uniques) error {
	where := fmt.Sprintf("server_list[%d] ", idx)
	id, err := sv.need(where, "server_id")
	if err != nil {
		return err
	}
	if id == "" {
		return errf(hccl.EPara, "%shas an empty server_id", where)
	}
	if len(id) > MaxServerIDLength {
		return errf(hccl.EPara, "%sserver_id of %d bytes, limit %d", where, len(id), MaxServerIDLength)
	}
	if err := u.insert("server_id", id); err != nil {
		return err
	}
	host, ok, err := sv.str(where, "host_ip")
	if err != nil {
		return err
	}
	if ok && net.ParseIP(host) == nil {
		return errf(hccl.EPara, "%shost_ip %q is not an IP address", where, host)
	}
	devs, ok, err := sv.list(where, "device")
	if err != nil {
		return err
	}
	if !ok {
		return errf(hccl.ENotFound, "%shas no \"device\"", where)
	}
	if len(devs) == 0 {
		return errf(hccl.EPara, "%shas no devices", where)
	}
	for j, d := range devs {
		r, err := t.device(d, fmt.Sprintf("%sdevice[%d] ", where, j), maxDev, u)
		if err != nil {
			return err
		}
		r.ServerID, r.ServerIndex, r.HostIP = id, idx, host
		t.Ranks = append(t.Ranks, r)
	}
	// Every rank has as many device IPs as the first
	// (topoinfo_ranktableConcise.cc:349-362).
	for _, r := range t.Ranks {
		if len(r.DeviceIPs) != len(t.Ranks[0].DeviceIPs) {
			return errf(hccl.EPara, "rank %d has %d device IPs, rank %d has %d", r.ID, len(r.DeviceIPs),
				t.Ranks[0].ID, len(t.Ranks[0].DeviceIPs))
		}
	}
	return nil
}

// device is GetSingleDevice (topoinfo_ranktableConcise.cc:405-490).
func (t *Table) device(d object, where string, maxDev int, u uniques) (Rank, error) {
	r := Rank{SuperDeviceID: -1}
	rid, err := d.need(where, "rank_id")
	if err != nil {
		return r, err
	}
	sdev, err := d.need(where, "device_id")
	if err != nil {
		return r, err
	}
	dev, ok := stoul(sdev)
	if !ok {
		return r, errf(hccl.EPara, "%sdevice_id %q is not a number", where, sdev)
	}
	if dev > uint64(maxDev-1) {
		return r, errf(hccl.EPara, "%sdevice_id %d, a server has devices 0..%d", where, dev, maxDev-1)
	}
	r.Device = int(dev)
	// GetSingleDeviceIp (topoinfo_ranktableConcise.cc:505-565): required
	// past one server, each address unique and valid.
	ips, ok, err := d.str(where, "device_ip")
	if err != nil {
		return r, err
	}
	if !ok && t.ServerCount > 1 {
		return r, errf(hccl.EPara, "%shas no device_ip, which a table of %d servers needs", where, t.ServerCount)
	}
	if ok {
		for _, ip := range strings.Split(ips, ",") {
			if err := u.insert("device_ip", ip); err != nil {
				return r, err
			}
			if net.ParseIP(ip) == nil {
				return r, errf(hccl.EPara, "%sdevice_ip %q is not an IP address", where, ip)
			}
			r.DeviceIPs = append(r.DeviceIPs, ip)
		}
	}
	id, ok := stoul(rid)
	if !ok {
		return r, errf(hccl.EPara, "%srank_id %q is not a non-negative integer", where, rid)
	}
	r.ID = int(id)
	if t.Version == Version12 {
		// GetSingleSuperDeviceId (topoinfo_ranktableConcise.cc:835-860).
		s, ok, err := d.str(where, "super_device_id")
		if err != nil {
			return r, err
		}
		if ok {
			v, good := stoul(s)
			if !good {
				return r, errf(hccl.EPara, "%ssuper_device_id %q is not a number", where, s)
			}
			r.SuperDeviceID = int64(v)
		}
	}
	return r, nil
}

// superPods is GetSuperPodList (topoinfo_ranktableConcise.cc:862-960):
// optional; each pod has a unique non-empty super_pod_id and a
// server_list whose server_ids are servers of the table.
func (t *Table) superPods(top object, u uniques) error {
	pods, ok, err := top.list("", "super_pod_list")
	if err != nil || !ok {
		return err
	}
	for i, p := range pods {
		where := fmt.Sprintf("super_pod_list[%d] ", i)
		id, _, err := p.str(where, "super_pod_id")
		if err != nil {
			return err
		}
		if id == "" {
			return errf(hccl.EPara, "%shas no super_pod_id", where)
		}
		if err := u.insert("super_pod_id", id); err != nil {
			return err
		}
		svs, ok, err := p.list(where, "server_list")
		if err != nil {
			return err
		}
		if !ok {
			return errf(hccl.ENotFound, "%shas no \"server_list\"", where)
		}
		for j, sv := range svs {
			sid, _, err := sv.str(fmt.Sprintf("%sserver_list[%d] ", where, j), "server_id")
			if err != nil {
				return err
			}
			found := false
			for k := range t.Ranks {
				if t.Ranks[k].ServerID == sid {
					t.Ranks[k].SuperPodID = id
					found = true
				}
			}
			if !found {
				return errf(hccl.EPara, "%sserver_list[%d] names server %q, which server_list does not have", where, j, sid)
			}
		}
	}
	t.SuperPods = len(pods)
	return nil
}

// Check makes the checks HCCL makes of the rank argument against a parsed
// table, in its order: the rank must be inside the table
// (topoinfo_ranktableConcise.cc:143-152, HCCL_E_PARA), the rank_id sorted
// into its position must be its own (:154-165, HCCL_E_UNAVAIL — a table
// with a duplicate or a gap before the rank), and then every position
// must hold its own rank_id (config.cc:359-378, HCCL_E_PARA: rank ids are
// 0..n-1, each once).
func (t *Table) Check(rank int) error {
	if t == nil {
		return hccl.NilHandle("ranktable.Check", "table")
	}
	n := len(t.Ranks)
	if rank < 0 || rank >= n {
		return errf(hccl.EPara, "rank %d, the table has %d ranks", rank, n)
	}
	if got := t.Ranks[rank].ID; got != rank {
		return errf(hccl.EUnavail, "rank %d: position %d of the sorted rank list holds rank_id %d (a rank_id repeated or missing)", rank, rank, got)
	}
	for i, r := range t.Ranks {
		if r.ID != i {
			return errf(hccl.EPara, "rank_id %d at position %d: rank ids must be 0..%d, each once", r.ID, i, n-1)
		}
	}
	return nil
}
