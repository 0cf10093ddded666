package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/hccl"
)

// hasRootHex reports whether b holds a root info written out in hex: a
// run of 2·4108 hex digits.
func hasRootHex(b []byte) bool {
	run := 0
	for _, c := range b {
		if '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' {
			if run++; run >= 2*hccl.RootInfoBytes {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

// children returns the pids of this process's child processes.
func children(t *testing.T) []int {
	t.Helper()
	var out []int
	ents, err := os.ReadDir("/proc")
	require.NoError(t, err)
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so cut at its ')'.
		f := strings.Fields(string(st[bytes.LastIndexByte(st, ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(os.Getpid()) {
			out = append(out, pid)
		}
	}
	return out
}

// TestRootInfoNotInEnvironment: while the rank processes run, what any
// process of the user can read of them (/proc/PID/environ and cmdline)
// holds no root info; it reached them over the pipe they inherited, and
// the job still runs. Before, every rank's environment carried it in hex
// for its whole life.
func TestRootInfoNotInEnvironment(t *testing.T) {
	var out, errOut bytes.Buffer
	cfg := config{ranks: 2, size: 1 << 20, iters: 50, rows: 5000, rowSize: 64, timeout: 30 * time.Second}
	done := make(chan error, 1)
	go func() { done <- launch(cfg, &out, &errOut) }()
	seen := 0
	for running := true; running; {
		select {
		case err := <-done:
			require.NoError(t, err, "stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
			running = false
		case <-time.After(2 * time.Millisecond):
			for _, pid := range children(t) {
				for _, f := range []string{"environ", "cmdline"} {
					b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), f))
					if err != nil || len(b) == 0 {
						continue // gone, or not yet exec'd
					}
					if f == "environ" && bytes.Contains(b, []byte(envRank+"=")) {
						seen++
					}
					require.False(t, hasRootHex(b), "the root info is in /proc/%d/%s", pid, f)
				}
			}
		}
	}
	require.NotZero(t, seen, "no rank process was observed while it ran")
	require.Contains(t, out.String(), "all ranks OK")
}
