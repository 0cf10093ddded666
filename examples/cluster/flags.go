package main

import (
	"flag"
	"io"
	"os"
	"time"

	"github.com/ascend-go/cann/hccl"
	"github.com/ascend-go/cann/internal/examplecli"
)

// config is what a launcher and its ranks run.
type config struct {
	rankTable string // launcher: the rank table
	server    string // launcher: only this server's ranks ("" all)
	killRank  int    // launcher: SIGKILL this rank once it joined (-1 none)
	count     int    // AllReduce elements
	rows      int    // BatchGet rows
	timeout   time.Duration
	backend   string
	seed      uint64
}

// Bounds of the flags.
const (
	maxCount = 1 << 22 // 16 MiB fp32 per AllReduce buffer
	maxRows  = 1 << 16
	rowBytes = 64
)

func parseArgs(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("cluster", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.rankTable, "ranktable", "", "rank table (hccl.json): launch its ranks; without it the program is one rank, configured by RANK_TABLE_FILE, RANK_ID, DEVICE_ID")
	fs.StringVar(&c.server, "server", "", "launch only the ranks of this server_id (default: every rank of the table, all on this host)")
	fs.IntVar(&c.killRank, "kill-rank", -1, "fault injection: SIGKILL this rank once it has joined the communicator")
	fs.IntVar(&c.count, "count", 65536, "AllReduce elements (fp32)")
	fs.IntVar(&c.rows, "rows", 256, "rows of 64 bytes each rank reads from its neighbour with BatchGet")
	fs.DurationVar(&c.timeout, "timeout", 30*time.Second, "connect and execution timeout of the fallback's HCCL (the rank table's status wait too)")
	fs.Uint64Var(&c.seed, "seed", 0, "seed of the data (0: from the clock, chosen by the launcher)")
	back := examplecli.BackendFlag(fs)
	if err := examplecli.Parse(fs, args); err != nil {
		return c, err
	}
	c.backend = *back
	if _, err := examplecli.ResolveBackend(c.backend); err != nil {
		return c, &examplecli.UsageError{Msg: err.Error()}
	}
	if err := examplecli.CheckRange("count", int64(c.count), 1, maxCount); err != nil {
		return c, err
	}
	if err := examplecli.CheckRange("rows", int64(c.rows), 1, maxRows); err != nil {
		return c, err
	}
	if c.timeout <= 0 {
		return c, examplecli.Usagef("-timeout %v: must be positive", c.timeout)
	}
	if c.rankTable != "" {
		if err := examplecli.CheckReadableFile("ranktable", c.rankTable); err != nil {
			return c, err
		}
	} else {
		if c.server != "" || c.killRank >= 0 {
			return c, examplecli.Usagef("-server and -kill-rank are launcher flags: give -ranktable")
		}
		if os.Getenv(hccl.EnvRankID) == "" {
			return c, examplecli.Usagef("give -ranktable to launch a job, or set %s, %s and %s to run one rank",
				hccl.EnvRankTableFile, hccl.EnvRankID, hccl.EnvDeviceID)
		}
	}
	return c, nil
}
