package hcclsim

import "sync/atomic"

// Traffic counts the buffer bytes the multi-process communicators of this
// process moved, by path, since the process started: StagedBytes were
// copied into a staging area of a shared-memory segment (every byte once,
// on its way in), DirectBytes were delivered straight from one rank's
// device memory to another's (counted by the rank whose buffer they
// filled, or, for one-sided transfers, by the requester). Tests use it to
// observe which data path a communicator took. A plain value.
type Traffic struct {
	StagedBytes uint64
	DirectBytes uint64
}

var traffic struct {
	staged, direct atomic.Uint64
}

// ReadTraffic returns the process's counters. Safe for concurrent use.
func ReadTraffic() Traffic {
	return Traffic{StagedBytes: traffic.staged.Load(), DirectBytes: traffic.direct.Load()}
}

// countStaged counts n bytes copied into a staging area.
func countStaged(n int) { traffic.staged.Add(uint64(n)) }

// countDirect counts n bytes delivered directly.
func countDirect(n int) { traffic.direct.Add(uint64(n)) }
