package engram

import "fmt"

// Post flags. They are also the wire contract of the send-queue hook a
// backend may implement (see sendQueues): bit 0 completion flag, bit 1
// drain after this read, bit 2 batch commit after this read, bits 8.. the
// channel index within the link to the peer.
const (
	PostSignal       = 1 << 0
	PostDrain        = 1 << 1
	PostCommit       = 1 << 2
	PostChannelShift = 8
)

// Post is one remote read the kernel posts: token Token (its position in
// the indices) gets row Row of rank Peer, read by core Core on channel
// Channel of the link to Peer, with Flags (PostSignal, PostDrain,
// PostCommit).
type Post struct {
	Token   int32
	Peer    int32
	Row     int32
	Core    int16
	Channel uint8
	Flags   uint8
}

// Signal reports the completion flag (CQE).
func (p Post) Signal() bool { return p.Flags&PostSignal != 0 }

// Drain reports a drain of the channel right after the read.
func (p Post) Drain() bool { return p.Flags&PostDrain != 0 }

// Commit reports a batch commit right after the read.
func (p Post) Commit() bool { return p.Flags&PostCommit != 0 }

// wire is the post's hook word: channel and flags.
func (p Post) wire() uint32 { return uint32(p.Channel)<<PostChannelShift | uint32(p.Flags) }

// plan is the work of one fetch, computed on the host exactly as the
// kernel's cores would do it. Its slices are reused from fetch to fetch.
type plan struct {
	posts  []Post  // remote reads in post order per (core, channel)
	local  []int32 // tokens of own rows, in token order
	bad    []int32 // tokens with an out-of-range index, in token order
	byPeer []int32 // start of each peer's posts after grouping (len W+1)

	// scratch
	cnt  []int32 // per owner rank (+1 for out of range) in a batch
	off  []int32
	pos  []int32 // batch positions grouped by owner
	work []Work
	sq   []int32 // in-flight counters per (peer, channel) (fixed kernel)
	tmp  []Post
}

// Plan computes the remote reads of a fetch of indices by rank rankID of
// numRanks with entries rows of rowBytes per rank: the posts in kernel
// order with their completion, drain and commit flags (the row size sets
// the relay buffers, hence the index batch: see IndexBatch). For tests
// and tools; a Buffer plans with reused memory.
func (e Engine) Plan(indices []int32, numRanks, rankID int, entries, rowBytes int64) []Post {
	var p plan
	e.plan(&p, indices, numRanks, rankID, entries, rowBytes)
	return p.posts
}

// plan fills p for a fetch of indices. Out-of-range indices (negative or
// ≥ W·E) match no rank (the kernel pads its Div lanes with W) and are
// listed in p.bad.
func (e Engine) plan(p *plan, indices []int32, w, rank int, entries, rowBytes int64) {
	p.posts, p.local, p.bad = p.posts[:0], p.local[:0], p.bad[:0]
	p.cnt = grow(p.cnt, w+1)
	p.off = grow(p.off, w+2)
	nch := usedChannels(w)
	p.sq = grow(p.sq, w*nch)
	clear(p.sq)
	t := len(indices)
	if t == 0 || entries == 0 {
		for i := range indices {
			p.bad = append(p.bad, int32(i))
		}
		return
	}
	limit := int64(w) * entries
	batch := e.IndexBatch(t, w, rowBytes)
	p.pos = grow(p.pos, batch)
	shared := make([]sharedCounter, 0)
	if e.SharedSQCounter {
		shared = make([]sharedCounter, e.Cores)
	}
	for start := 0; start < t; start += batch {
		n := min(batch, t-start)
		// ScatterByRank: owner = idx / E (out of range: bucket W),
		// grouped by owner in token order.
		clear(p.cnt)
		for i := 0; i < n; i++ {
			p.cnt[owner(indices[start+i], entries, limit, w)]++
		}
		p.off[0] = 0
		for r := 0; r <= w; r++ {
			p.off[r+1] = p.off[r] + p.cnt[r]
		}
		for i := 0; i < n; i++ {
			o := owner(indices[start+i], entries, limit, w)
			p.pos[p.off[o]] = int32(i)
			p.off[o]++
		}
		for r := w; r >= 0; r-- { // restore the starts
			p.off[r+1] = p.off[r]
		}
		p.off[0] = 0
		for _, i := range p.pos[p.off[w]:p.off[w+1]] {
			p.bad = append(p.bad, int32(start)+i)
		}
		for _, i := range p.pos[p.off[rank]:p.off[rank+1]] {
			p.local = append(p.local, int32(start)+i)
		}
		// FetchByRank: every core's remote work.
		for core := 0; core < e.Cores; core++ {
			p.work = e.coreWork(p.work[:0], core, w, rank)
			for _, wk := range p.work {
				if wk.Local {
					continue
				}
				e.remoteFetchRank(p, shared, core, wk, indices, start, entries, nch)
			}
		}
	}
}

type sharedCounter struct {
	count  int
	active int // peer·channels+channel of the last read, -1 none
	init   bool
}

// remoteFetchRank posts the reads of one core for one owner rank in one
// index batch (RemoteFetchRank): a batch is committed when it holds
// BatchCapacity reads; the read that brings the channel's in-flight count
// to the queue depth carries the completion flag and is followed by a
// flush and a drain, after which the count restarts; the last read of the
// call carries the completion flag too; a partial batch is committed at
// the end.
func (e Engine) remoteFetchRank(p *plan, shared []sharedCounter, core int, wk Work, indices []int32, start int, entries int64, nch int) {
	toks := p.pos[p.off[wk.Rank]:p.off[wk.Rank+1]]
	if wk.Offset >= len(toks) {
		return
	}
	key := wk.Rank*nch + wk.Channel
	counter := &p.sq[key]
	var sc *sharedCounter
	if e.SharedSQCounter {
		sc = &shared[core]
		if !sc.init || sc.active != key {
			// The old kernel zeroed its single counter whenever the
			// channel handle changed, losing the reads still in flight
			// on the channel it left.
			sc.count, sc.active, sc.init = 0, key, true
		}
	}
	prepared := 0
	last := len(toks) - 1 - (len(toks)-1-wk.Offset)%wk.Stride
	for j := wk.Offset; j < len(toks); j += wk.Stride {
		i := toks[j]
		g := int64(indices[start+int(i)])
		post := Post{Token: int32(start) + i, Peer: int32(wk.Rank), Row: int32(g - int64(wk.Rank)*entries),
			Core: int16(core), Channel: uint8(wk.Channel)}
		cnt := int(*counter)
		if sc != nil {
			cnt = sc.count
		}
		drain := cnt+1 >= e.SQDepth
		if drain || j == last {
			post.Flags |= PostSignal
		}
		prepared++
		if drain || prepared == e.BatchCapacity || j == last {
			post.Flags |= PostCommit
			prepared = 0
		}
		if drain {
			post.Flags |= PostDrain
			cnt = 0
		} else {
			cnt++
		}
		if sc != nil {
			sc.count = cnt
		} else {
			*counter = int32(cnt)
		}
		p.posts = append(p.posts, post)
	}
}

// owner is the rank of global index g, or w when g is out of range.
func owner(g int32, entries, limit int64, w int) int {
	if g < 0 || int64(g) >= limit {
		return w
	}
	return int(int64(g) / entries)
}

// groupByPeer orders the posts by peer (stable, so each channel keeps its
// post order) and records each peer's range in p.byPeer.
func (p *plan) groupByPeer(w int) {
	p.byPeer = grow(p.byPeer, w+1)
	clear(p.byPeer)
	for _, x := range p.posts {
		p.byPeer[x.Peer+1]++
	}
	for r := 1; r <= w; r++ {
		p.byPeer[r] += p.byPeer[r-1]
	}
	p.tmp = growPosts(p.tmp, len(p.posts))
	p.off = grow(p.off, w+2)
	copy(p.off, p.byPeer)
	for _, x := range p.posts {
		p.tmp[p.off[x.Peer]] = x
		p.off[x.Peer]++
	}
	p.posts, p.tmp = p.tmp, p.posts
}

func grow(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}

func growPosts(s []Post, n int) []Post {
	if cap(s) < n {
		return make([]Post, n)
	}
	return s[:n]
}

// CheckSendQueues replays posts against send queues of the given depth,
// one per (peer, channel), as the device would: every read occupies an
// entry until a drain of its channel, and a drain needs the channel's
// last read to carry the completion flag; the wait that follows the fetch
// drains every channel. It returns the first overflow or impossible
// drain, and the highest occupancy reached.
func CheckSendQueues(posts []Post, depth int) (peak int, err error) {
	type q struct {
		n      int
		signal bool
	}
	qs := map[[2]int32]*q{}
	for i, x := range posts {
		k := [2]int32{x.Peer, int32(x.Channel)}
		s := qs[k]
		if s == nil {
			s = &q{}
			qs[k] = s
		}
		s.n++
		s.signal = x.Signal()
		peak = max(peak, s.n)
		if s.n > depth {
			return peak, fmt.Errorf("post %d: send queue of channel %d to rank %d overflows: %d reads in flight, depth %d", i, x.Channel, x.Peer, s.n, depth)
		}
		if x.Drain() {
			s.n = 0
		}
	}
	for k, s := range qs {
		if s.n > 0 && !s.signal {
			return peak, fmt.Errorf("channel %d to rank %d: the wait drains %d reads but the last carries no completion flag", k[1], k[0], s.n)
		}
	}
	return peak, nil
}
