// Command cluster starts a job the way an Ascend cluster does — from a
// rank table — and runs the same program on the HCCL fallback in CI and on
// a real cluster.
//
// As a launcher (with -ranktable) it reads the rank table (hccl.json) as
// HCCL does, waiting for its status to become "completed", and starts one
// process per rank of the table (or of one server, -server) with the
// launch environment an Ascend job's processes get: RANK_TABLE_FILE,
// RANK_ID, RANK_SIZE, DEVICE_ID and ASCEND_DEVICE_ID. It prints every
// rank's report in rank order and exits non-zero when any rank failed.
//
//	go run ./examples/cluster -ranktable examples/cluster/testdata/v1.0-4ranks.json
//	go run ./examples/cluster -ranktable examples/cluster/testdata/v1.2-2ranks.json -count 1048576
//
// As a rank (no -ranktable, RANK_ID in the environment: how the launcher
// or a cluster scheduler starts it) it calls hccl.InitFromEnv — open
// DEVICE_ID, create a stream, HcclCommInitClusterInfo(RANK_TABLE_FILE,
// RANK_ID) — then runs an fp32 AllReduce, an int32 AllGather and one-sided
// BatchGet reads of its neighbour's table, checks every result against
// values it computes itself, and exits non-zero on any failure. On a
// cluster, MindCluster writes the rank table and sets the environment;
// run the same binary with -backend native in every container (see
// docs/cluster.md).
//
// On the fallback every rank is a process of this host with its own
// host-memory NPU; the ranks of a rank-table world find each other through
// a private job directory the launcher creates (HCCLSIM_JOB_DIR, a path:
// the key inside it is readable by this user only). -kill-rank R kills
// rank R with SIGKILL once it has joined, to show what the others report
// when a peer dies.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/ascend-go/cann/hccl"
	"github.com/ascend-go/cann/internal/examplecli"
)

func main() {
	os.Exit(mainCode(os.Args[1:], os.Stdout, os.Stderr))
}

// mainCode is main with its arguments, output and exit status explicit.
func mainCode(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseArgs(args, stderr)
	if err == nil {
		if cfg.rankTable == "" {
			err = runRank(cfg, stdout)
		} else {
			err = launch(cfg, stdout, stderr)
		}
	}
	if err != nil && cfg.rankTable == "" && os.Getenv(hccl.EnvRankID) != "" {
		// A rank's failure is part of its report, with its code.
		fmt.Fprintf(stdout, "rank %s: FAIL: %v\n", os.Getenv(hccl.EnvRankID), err)
	}
	return examplecli.Exit("cluster", err, stderr)
}
