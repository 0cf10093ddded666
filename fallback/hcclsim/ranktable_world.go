package hcclsim

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/ascend-go/cann/hccl"
	"github.com/ascend-go/cann/hccl/ranktable"
)

// A rank-table world is a root-info world whose root info rank 0 hands to
// the other ranks through the job directory (ranktable_key.go), sealed:
// rank 0 calls GetRootInfo (a rendezvous in its process, a random world
// id and secret), seals the root info with AES-256-GCM under a key derived
// from the job key and the digest of the table's bytes, and publishes it
// under a name derived the same way; every rank, rank 0 included, then
// joins with that root info exactly as CommInitRootInfo does, so admission
// (the challenge and HMAC proofs of auth.go), the rendezvous bounds and
// the shared-memory transport are those of root-info worlds. A process
// needs both the job key and the table's exact bytes to open the handoff;
// the world's own secret is random and never derived from either.

const handoffMax = 12 + rootInfoBytes + 16 + 64 // nonce, sealed root info, tag, slack

// joinedWorlds remembers, per table digest and rank, the worlds this
// process joined through a handoff, so that a rank forming a second
// communicator from the same table does not take the first one's handoff
// (rank 0 may not have removed it yet).
var joinedWorlds = struct {
	sync.Mutex
	m map[string]map[[16]byte]bool
}{m: map[string]map[[16]byte]bool{}}

func worldKey(digest [32]byte, rank uint32) string { return fmt.Sprintf("%x/%d", digest, rank) }

func joinedWorld(k string, id [16]byte) bool {
	joinedWorlds.Lock()
	defer joinedWorlds.Unlock()
	return joinedWorlds.m[k][id]
}

func rememberWorld(k string, id [16]byte) {
	joinedWorlds.Lock()
	defer joinedWorlds.Unlock()
	if joinedWorlds.m[k] == nil {
		joinedWorlds.m[k] = map[[16]byte]bool{}
	}
	joinedWorlds.m[k][id] = true
}

// CommInitClusterInfo joins rank `rank` of the communicator the rank table
// at clusterInfo describes, its ranks in this process or in others: it
// loads the table as HCCL does (package ranktable: the status wait, the
// parse checks and the rank checks with HCCL's codes), checks the calling
// thread's device against the table, and forms the world through rank 0's
// rendezvous. It blocks until every rank has joined or the connect timeout.
func (s *Sim) CommInitClusterInfo(clusterInfo string, rank uint32) (hccl.CommHandle, error) {
	return s.initCluster("HcclCommInitClusterInfo", clusterInfo, rank, nil)
}

// CommInitClusterInfoConfig is CommInitClusterInfo with a configuration,
// honoured as CommInitRootInfoConfig honours it.
func (s *Sim) CommInitClusterInfoConfig(clusterInfo string, rank uint32, cfg *hccl.CommConfig) (hccl.CommHandle, error) {
	if cfg == nil { // op_base.cc:1036-1042
		return 0, hccl.Errorf("HcclCommInitClusterInfoConfig", hccl.EPtr, "null config")
	}
	return s.initCluster("HcclCommInitClusterInfoConfig", clusterInfo, rank, cfg)
}

func (s *Sim) initCluster(op, path string, rank uint32, cfg *hccl.CommConfig) (hccl.CommHandle, error) {
	if s == nil {
		return 0, hccl.NilHandle(op, "hcclsim.Sim")
	}
	if s.envErr != nil {
		return 0, herr(op, s.envErr)
	}
	start := time.Now()
	tab, err := ranktable.Load(context.Background(), path, ranktable.LoadOptions{Wait: s.opts.ConnectTimeout})
	if err == nil {
		err = tab.Check(int(rank))
	}
	if err != nil {
		return 0, hccl.Errorf(op, hccl.ResultOf(err), "%v", err)
	}
	r := tab.Ranks[rank]
	// The thread's device must be the rank's (topoinfo_ranktableConcise.cc:176-189).
	dev, err := s.env.currentDevice()
	if err != nil {
		return 0, hccl.Errorf(op, hccl.ERuntime, "no current device on this thread: %v", err)
	}
	if int(dev) != r.Device {
		return 0, hccl.Errorf(op, hccl.EUnavail, "rank %d is device %d in %s, the thread's device is %d", rank, r.Device, path, dev)
	}
	abs, _ := filepath.Abs(path)
	dir, err := jobDir(abs)
	var key []byte
	if err == nil {
		key, err = jobKey(dir)
	}
	if err != nil {
		return 0, hccl.Errorf(op, hccl.EPara, "rank table %s: job key: %v", path, err)
	}
	h := &handoff{
		file: filepath.Join(dir, "world-"+hex.EncodeToString(derive(key, "hcclsim rank table name", tab.Digest)[:16])),
		key:  derive(key, "hcclsim rank table seal", tab.Digest),
		seen: worldKey(tab.Digest, rank),
	}
	n := uint32(tab.Size())
	if rank == 0 {
		raw, err := s.getRootInfo()
		if err != nil {
			return 0, herr(op, err)
		}
		if err := h.publish(dir, raw[:]); err != nil {
			return 0, hccl.Errorf(op, hccl.ESyscall, "rank table %s: publish the rendezvous: %v", path, err)
		}
		// Every rank has read the handoff once the world formed or failed.
		defer os.Remove(h.file)
		root := hccl.RootInfo(raw)
		return s.initRoot(op, n, &root, rank, cfg)
	}
	deadline := start.Add(s.opts.ConnectTimeout)
	tried := map[[16]byte]bool{}
	for {
		raw, id, err := h.await(deadline, tried)
		if err != nil {
			return 0, hccl.Errorf(op, hccl.ETimeout, "rank %d of rank table %s: %v", rank, path, err)
		}
		var root hccl.RootInfo
		copy(root[:], raw)
		c, err := s.initRoot(op, n, &root, rank, cfg)
		if err == nil {
			rememberWorld(h.seen, id)
			return c, nil
		}
		// A handoff left by an earlier formation whose rendezvous has
		// ended refuses the connection: wait for rank 0's new one.
		if hccl.ResultOf(err) != hccl.ETCPConnect || time.Now().After(deadline) {
			return 0, err
		}
		tried[id] = true
	}
}

// handoff is the sealed root info of one rank-table world.
type handoff struct {
	file string
	key  []byte // AES-256 key
	seen string // joinedWorlds key of the table and rank
}

func (h *handoff) aead() cipher.AEAD {
	b, _ := aes.NewCipher(h.key[:32])
	a, _ := cipher.NewGCM(b)
	return a
}

// publish seals root and renames it into place, so readers see all of it
// or nothing.
func (h *handoff) publish(dir string, root []byte) error {
	a := h.aead()
	nonce := make([]byte, a.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return err
	}
	tmp, err := writePrivateTemp(dir, "world", a.Seal(nonce, nonce, root, nil))
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, h.file); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}

// open returns the root info in the handoff file and its world id, or why
// it is not (yet) usable: absent, not sealed under this table and key,
// left by a rank 0 that has exited (a job that crashed, with the same
// sidecar key) or by a formation that has ended.
func (h *handoff) open(skip map[[16]byte]bool) ([]byte, [16]byte, error) {
	var none [16]byte
	b, err := readPrivate(h.file, 1, handoffMax)
	if err != nil {
		return nil, none, err
	}
	a := h.aead()
	if len(b) < a.NonceSize() {
		return nil, none, errors.New("short handoff")
	}
	root, err := a.Open(nil, b[:a.NonceSize()], b[a.NonceSize():], nil)
	if err != nil {
		return nil, none, errors.New("the handoff is not sealed for this table and job key")
	}
	ri, ok := decodeRootInfo(root)
	switch {
	case !ok:
		return nil, none, errors.New("the handoff holds no root info")
	case skip[ri.id] || joinedWorld(h.seen, ri.id):
		return nil, none, errors.New("the handoff is of a communicator formed or failed before")
	case ri.pid == os.Getpid() && lookupHub(ri.id) == nil:
		return nil, none, errors.New("the handoff is of a rendezvous that has ended")
	case ri.pid != os.Getpid() && syscall.Kill(ri.pid, 0) == syscall.ESRCH:
		return nil, none, fmt.Errorf("the handoff is from process %d, which has exited", ri.pid)
	}
	return root, ri.id, nil
}

// await polls for a usable handoff until deadline.
func (h *handoff) await(deadline time.Time, skip map[[16]byte]bool) ([]byte, [16]byte, error) {
	for {
		root, id, err := h.open(skip)
		if err == nil {
			return root, id, nil
		}
		if time.Now().After(deadline) {
			why := "it never appeared"
			if !errors.Is(err, os.ErrNotExist) {
				why = err.Error()
			}
			return nil, id, fmt.Errorf("rank 0 did not publish its rendezvous in time (%s)", why)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
