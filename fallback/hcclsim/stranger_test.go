package hcclsim_test

import (
	"bufio"
	"crypto/rand"
	"encoding/binary"
	mrand "math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback/hcclsim"
	"github.com/ascend-go/cann/fallback/hcclsim/procs"
	"github.com/ascend-go/cann/hccl"
)

// A stranger at a rendezvous: a process that found the loopback port but
// does not hold the root info (or, for the rogue cases, holds it and
// misbehaves). Legitimate ranks run as processes; the rendezvous runs in
// this test process, so a panic there fails the whole test binary.

type stranger struct {
	conn net.Conn
	r    *bufio.Reader
}

func dialStranger(t *testing.T, addr string) *stranger {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	require.NoError(t, err)
	return &stranger{conn: c, r: bufio.NewReader(c)}
}

// challenge reads the rendezvous's first message.
func (s *stranger) challenge(t *testing.T) []byte {
	t.Helper()
	_ = s.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	m, err := hcclsim.ReadFrame(s.r)
	require.NoError(t, err)
	require.Equal(t, hcclsim.KindChallenge, m.Kind)
	return m.Nonce
}

func (s *stranger) send(t *testing.T, m hcclsim.WireMsg) {
	t.Helper()
	_, err := s.conn.Write(hcclsim.EncodeFrame(m))
	require.NoError(t, err)
}

// trySend sends m to a rendezvous that may already have closed the
// connection; a failed write is ignored.
func (s *stranger) trySend(m hcclsim.WireMsg) {
	_, _ = s.conn.Write(hcclsim.EncodeFrame(m))
}

// closedByHub reports whether the rendezvous closed the connection (after
// any messages it still had queued) within the wait.
func (s *stranger) closedByHub(wait time.Duration) bool {
	_ = s.conn.SetReadDeadline(time.Now().Add(wait))
	buf := make([]byte, 4096)
	for {
		if _, err := s.r.Read(buf); err != nil {
			ne, ok := err.(net.Error)
			return !(ok && ne.Timeout())
		}
	}
}

func randBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

func openFDs() int {
	ents, _ := os.ReadDir("/proc/self/fd")
	return len(ents)
}

// strangerCase acts before the legitimate ranks join (between rank 0's
// init and the others'), and may check afterwards what it got.
type strangerCase struct {
	name string
	// act runs while rank 0 waits at the rendezvous.
	act func(t *testing.T, addr string, root []byte, victim string) []*stranger
	// rogueRank, when set, is the rank the case takes over (the real
	// rank's init then fails).
	rogueRank int
	// formed: the legitimate ranks form and compute; otherwise every
	// legitimate rank fails with an HCCL code.
	formed bool
}

func strangerCases() []strangerCase {
	const n = 2
	helloAs := func(t *testing.T, s *stranger, root []byte, nRanks, rank int, withSecret bool) {
		nonce := s.challenge(t)
		mine := randBytes(hcclsim.NonceBytes)
		proof := randBytes(32)
		if withSecret {
			proof = hcclsim.HelloProof(root, nonce, mine, nRanks, rank)
		}
		s.send(t, hcclsim.WireMsg{Kind: hcclsim.KindHello, N: nRanks, Rank: rank, Pid: os.Getpid(),
			StageSize: 1 << 20, Nonce: mine, Proof: proof})
	}
	expectReject := func(t *testing.T, s *stranger, code hccl.Result) {
		_ = s.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		m, err := hcclsim.ReadFrame(s.r)
		require.NoError(t, err)
		require.Equal(t, hcclsim.KindReject, m.Kind, "got %+v", m)
		assert.Equal(t, int32(code), m.Code, "%s", m.Text)
	}
	return []strangerCase{
		{name: "connect with nothing", formed: true, act: func(t *testing.T, addr string, root []byte, _ string) []*stranger {
			return []*stranger{dialStranger(t, addr), dialStranger(t, addr)}
		}},
		{name: "random bytes", formed: true, act: func(t *testing.T, addr string, root []byte, _ string) []*stranger {
			s := dialStranger(t, addr)
			_, _ = s.conn.Write(randBytes(8192))
			s2 := dialStranger(t, addr)
			s2.challenge(t)
			_, _ = s2.conn.Write(append([]byte{100, 0, 0, 0}, randBytes(100)...)) // a frame of noise
			return []*stranger{s, s2}
		}},
		{name: "hello without the secret claims a rank", formed: true, act: func(t *testing.T, addr string, root []byte, _ string) []*stranger {
			var out []*stranger
			for r := range n {
				// Rank 0 is taken already; rank 1 is not yet.
				s := dialStranger(t, addr)
				helloAs(t, s, root, n, r, false)
				expectReject(t, s, hccl.EPara)
				out = append(out, s)
			}
			return out
		}},
		{name: "replayed proof", formed: true, act: func(t *testing.T, addr string, root []byte, _ string) []*stranger {
			// A proof made for one challenge is worthless on another.
			s := dialStranger(t, addr)
			other := randBytes(hcclsim.NonceBytes)
			s.challenge(t)
			mine := randBytes(hcclsim.NonceBytes)
			s.send(t, hcclsim.WireMsg{Kind: hcclsim.KindHello, N: n, Rank: 1, Pid: os.Getpid(), StageSize: 1 << 20,
				Nonce: mine, Proof: hcclsim.HelloProof(root, other, mine, n, 1)})
			expectReject(t, s, hccl.EPara)
			return []*stranger{s}
		}},
		{name: "huge count", formed: true, act: func(t *testing.T, addr string, root []byte, _ string) []*stranger {
			s := dialStranger(t, addr)
			helloAs(t, s, root, 1<<30, 1, false)
			expectReject(t, s, hccl.EPara)
			s2 := dialStranger(t, addr)
			s2.challenge(t)
			// 2^50 ranks does not even decode (a rank count is an int32).
			s2.send(t, hcclsim.WireMsg{Kind: hcclsim.KindHello, N: 1 << 50, Rank: 1, Pid: 1, StageSize: 1 << 20})
			return []*stranger{s, s2}
		}},
		{name: "messages before admission", formed: true, act: func(t *testing.T, addr string, root []byte, victim string) []*stranger {
			s := dialStranger(t, addr)
			s.challenge(t)
			s.send(t, hcclsim.WireMsg{Kind: hcclsim.KindSeg, Seg: "../../../../" + victim})
			s2 := dialStranger(t, addr)
			s2.challenge(t)
			s2.send(t, hcclsim.WireMsg{Kind: hcclsim.KindMapped})
			return []*stranger{s, s2}
		}},
		{name: "oversize frame", formed: true, act: func(t *testing.T, addr string, root []byte, _ string) []*stranger {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			before := ms.HeapAlloc
			var out []*stranger
			for _, size := range []uint32{4097, 64 << 20, 0xfffffff0} {
				s := dialStranger(t, addr)
				s.challenge(t)
				var hdr [4]byte
				binary.LittleEndian.PutUint32(hdr[:], size)
				_, _ = s.conn.Write(hdr[:])
				_, _ = s.conn.Write(randBytes(64 << 10)) // may fail once the hub hung up
				assert.True(t, s.closedByHub(10*time.Second), "a %d-byte frame did not end the connection", size)
				out = append(out, s)
			}
			runtime.ReadMemStats(&ms)
			assert.Less(t, int64(ms.HeapAlloc)-int64(before), int64(16<<20), "the rendezvous allocated for a frame it refused")
			return out
		}},
		{name: "rogue holder sends a path as its segment", rogueRank: 1, act: func(t *testing.T, addr string, root []byte, victim string) []*stranger {
			// Even a process holding the root info names no file: the
			// hub ignores any name a peer sends and assigns its own.
			s := dialStranger(t, addr)
			helloAs(t, s, root, n, 1, true)
			_ = s.conn.SetReadDeadline(time.Now().Add(20 * time.Second))
			for {
				m, err := hcclsim.ReadFrame(s.r)
				require.NoError(t, err)
				if m.Kind == hcclsim.KindFormed {
					break
				}
			}
			rel, err := filepath.Rel("/dev/shm", victim)
			require.NoError(t, err)
			s.send(t, hcclsim.WireMsg{Kind: hcclsim.KindSeg, Seg: rel})
			// The rendezvous may have closed the connection at the bad
			// segment already (a write then meets a broken pipe): what
			// counts is the outcome below, not that these arrive.
			s.trySend(hcclsim.WireMsg{Kind: hcclsim.KindMapped})
			s.trySend(hcclsim.WireMsg{Kind: hcclsim.KindSeg, Seg: victim})
			_ = s.conn.Close() // lost during formation: the world fails
			return []*stranger{s}
		}},
		{name: "rogue holder breaks the protocol", rogueRank: 1, act: func(t *testing.T, addr string, root []byte, victim string) []*stranger {
			s := dialStranger(t, addr)
			helloAs(t, s, root, n, 1, true)
			_ = s.conn.SetReadDeadline(time.Now().Add(20 * time.Second))
			for {
				m, err := hcclsim.ReadFrame(s.r)
				require.NoError(t, err)
				if m.Kind == hcclsim.KindFormed {
					break
				}
			}
			s.send(t, hcclsim.WireMsg{Kind: hcclsim.KindJoin}) // a collective before the world runs
			return []*stranger{s}
		}},
	}
}

// TestStrangerAtRendezvous plays every stranger of issue 13 against a
// world of rank processes: the legitimate ranks form and compute an
// AllReduce exactly (or, when a rogue holding the root info took a rank,
// fail with an HCCL code), nothing panics, no file is deleted, every
// stranger's connection is closed by the rendezvous, and no goroutine, fd
// or segment name is left.
func TestStrangerAtRendezvous(t *testing.T) {
	const n, count = 2, 4096
	cl := startCluster(t, n, procs.Options{ExecTimeout: 20 * time.Second, ConnectTimeout: 20 * time.Second, BufferBytes: 256 << 10})
	b := cl.Backend()
	streams := make([]acl.StreamHandle, n)
	for r := range n {
		s, err := cl.Proc(r).OpenRank(int32(r))
		require.NoError(t, err)
		streams[r] = s
	}
	victimDir := t.TempDir()
	for _, tc := range strangerCases() {
		t.Run(tc.name, func(t *testing.T) {
			victim := filepath.Join(victimDir, "victim")
			require.NoError(t, os.WriteFile(victim, []byte("keep me"), 0o600))
			shmVictim := filepath.Join("/dev/shm", "victim-of-hcclsim-"+t.Name()[len(t.Name())-4:])
			require.NoError(t, os.WriteFile(shmVictim, []byte("keep me"), 0o600))
			defer os.Remove(shmVictim)
			goroutines, fds := runtime.NumGoroutine(), openFDs()

			root, err := b.GetRootInfo()
			require.NoError(t, err)
			addr := hcclsim.RootAddr(root[:])
			require.NotEmpty(t, addr)
			comms := make([]hccl.CommHandle, n)
			errs := make([]error, n)
			var wg sync.WaitGroup
			join := func(r int) {
				wg.Add(1)
				go func() {
					defer wg.Done()
					comms[r], errs[r] = b.CommInitRootInfo(n, &root, uint32(r))
				}()
			}
			join(0)
			target := victim
			if tc.rogueRank != 0 {
				target = shmVictim
			}
			strangers := tc.act(t, addr, root[:], target)
			for r := 1; r < n; r++ {
				join(r)
			}
			wg.Wait()
			if tc.formed {
				for r := range n {
					require.NoError(t, errs[r], "rank %d", r)
				}
				allReduceExact(t, cl, comms, streams, count)
			} else {
				for r := range n {
					t.Logf("rank %d: %v", r, errs[r])
					require.Error(t, errs[r], "rank %d", r)
					assert.NotEqual(t, hccl.Success, hccl.ResultOf(errs[r]), "rank %d fails with an HCCL code: %v", r, errs[r])
				}
			}
			for r := range n {
				if comms[r] != 0 {
					require.NoError(t, b.CommDestroy(comms[r]))
				}
			}
			for i, s := range strangers {
				assert.True(t, s.closedByHub(20*time.Second), "stranger %d still connected", i)
				_ = s.conn.Close()
			}
			for _, f := range []string{victim, shmVictim} {
				got, err := os.ReadFile(f)
				require.NoError(t, err, "%s was deleted", f)
				assert.Equal(t, "keep me", string(got))
			}
			assert.True(t, settleLong(func() bool { return runtime.NumGoroutine() <= goroutines && openFDs() <= fds }),
				"goroutines %d (before %d), fds %d (before %d)", runtime.NumGoroutine(), goroutines, openFDs(), fds)
			assert.Empty(t, shmLeftovers(t, cl))
		})
	}
}

// allReduceExact runs one int32 AllReduce on fresh random data and checks
// every rank's result against a sum computed here.
func allReduceExact(t *testing.T, cl *procs.Cluster, comms []hccl.CommHandle, streams []acl.StreamHandle, count int) {
	t.Helper()
	n := len(comms)
	b := cl.Backend()
	want := make([]int32, count)
	bufs := make([]uintptr, n)
	for r := range n {
		data := make([]byte, 4*count)
		for i := range count {
			v := int32(mrand.Uint32()) >> 2
			want[i] += v
			binary.LittleEndian.PutUint32(data[4*i:], uint32(v))
		}
		var err error
		bufs[r], err = cl.Proc(r).Alloc(uint64(len(data)))
		require.NoError(t, err)
		require.NoError(t, cl.Proc(r).Write(bufs[r], data))
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for r := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, lh, _ := b.Local(comms[r])
			_, errs[r] = cl.Proc(r).LoopAllReduce(lh, streams[r], bufs[r], bufs[r], uint64(count), hccl.Int32, hccl.Sum, 1)
		}()
	}
	wg.Wait()
	for r := range n {
		require.NoError(t, errs[r], "AllReduce on rank %d", r)
		got, err := cl.Proc(r).Read(bufs[r], 4*count)
		require.NoError(t, err)
		for i := range count {
			if g := int32(binary.LittleEndian.Uint32(got[4*i:])); g != want[i] {
				t.Fatalf("rank %d element %d: got %d want %d", r, i, g, want[i])
			}
		}
		require.NoError(t, cl.Proc(r).Free(bufs[r]))
	}
}
