package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ascend-go/cann/fallback/hcclsim"
	"github.com/ascend-go/cann/hccl"
	"github.com/ascend-go/cann/hccl/ranktable"
)

// joinedLine is what a rank prints once its communicator formed.
const joinedLine = "joined"

// launch starts the ranks of the table (of cfg.server, or all), each a
// copy of this program with the job's launch environment, and waits for
// them. It fails when the table does not load or any rank fails.
func launch(cfg config, out, errOut io.Writer) error {
	tab, err := ranktable.Load(context.Background(), cfg.rankTable, ranktable.LoadOptions{Wait: cfg.timeout})
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(cfg.rankTable)
	if err != nil {
		return err
	}
	var local []ranktable.Rank
	for _, r := range tab.Ranks {
		if cfg.server == "" || r.ServerID == cfg.server {
			local = append(local, r)
		}
	}
	if len(local) == 0 {
		return fmt.Errorf("-server %q: the rank table has no such server", cfg.server)
	}
	if cfg.seed == 0 {
		cfg.seed = uint64(time.Now().UnixNano())
	}
	// The job directory holds the key the ranks' rank-table world is
	// sealed with; fresh and private (0700) per job.
	jobDir, err := os.MkdirTemp("", "cluster-job-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(jobDir)
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "cluster: rank table %s, version %s, %d servers, %d ranks; launching %d here\n",
		cfg.rankTable, tab.Version, tab.ServerCount, tab.Size(), len(local))
	args := []string{"-count", strconv.Itoa(cfg.count), "-rows", strconv.Itoa(cfg.rows),
		"-timeout", cfg.timeout.String(), "-seed", strconv.FormatUint(cfg.seed, 10)}
	if cfg.backend != "" {
		args = append(args, "-backend", cfg.backend)
	}
	base := withoutLaunchEnv(os.Environ())
	// The ranks' standard error goes to one writer, copied by one
	// goroutine per rank: serialise it.
	errOut = &lockedWriter{w: errOut}
	reports := make([]bytes.Buffer, len(local))
	errs := make([]error, len(local))
	var wg sync.WaitGroup
	for i, r := range local {
		cmd := exec.Command(exe, args...)
		cmd.Env = append(base,
			hccl.EnvRankTableFile+"="+abs,
			hccl.EnvRankID+"="+strconv.Itoa(r.ID),
			hccl.EnvRankSize+"="+strconv.Itoa(tab.Size()),
			hccl.EnvDeviceID+"="+strconv.Itoa(r.Device),
			hccl.EnvAscendDeviceID+"="+strconv.Itoa(r.Device),
			hcclsim.EnvJobDir+"="+jobDir)
		cmd.Stderr = errOut
		pipe, err := cmd.StdoutPipe()
		if err != nil {
			return err
		}
		if err := cmd.Start(); err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc := bufio.NewScanner(pipe)
			for sc.Scan() {
				line := sc.Text()
				fmt.Fprintln(&reports[i], line)
				if r.ID == cfg.killRank && strings.HasSuffix(line, ": "+joinedLine) {
					_ = cmd.Process.Kill()
					fmt.Fprintf(&reports[i], "rank %d: killed by the launcher (-kill-rank)\n", r.ID)
				}
			}
			errs[i] = cmd.Wait()
		}()
	}
	wg.Wait()
	failed := 0
	for i := range local {
		_, _ = io.Copy(out, &reports[i])
		if errs[i] != nil {
			fmt.Fprintf(out, "rank %d: process failed: %v\n", local[i].ID, errs[i])
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d ranks failed", failed, len(local))
	}
	fmt.Fprintln(out, "cluster: all ranks OK")
	return nil
}

// withoutLaunchEnv drops the launch variables the launcher sets per rank.
func withoutLaunchEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case hccl.EnvRankTableFile, hccl.EnvRankID, hccl.EnvRankSize, hccl.EnvDeviceID, hccl.EnvAscendDeviceID, hcclsim.EnvJobDir:
			continue
		}
		out = append(out, kv)
	}
	return out
}

// lockedWriter serialises writes from several goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
