package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"

	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/fallback/hcclsim"
	"github.com/ascend-go/cann/internal/rootpipe"
)

// Environment of a rank process. The root info is not in it: any process
// of the same user can read another's environment (/proc/PID/environ)
// for as long as it runs, and a holder of the root info joins the world as
// a rank (docs/hcclsim-threat-model.md). It travels over a pipe the rank
// inherits (internal/rootpipe), which the launcher closes once written
// and the rank drains at start.
const (
	envRank  = "ALLREDUCE_RANK"
	envRanks = "ALLREDUCE_RANKS"
	envJob   = "ALLREDUCE_JOB"
)

func rankEnv() bool { return os.Getenv(envRank) != "" }

// launch creates the root info, starts cfg.ranks copies of this program as
// the ranks, waits for them and prints their reports in rank order.
func launch(cfg config, out, errOut io.Writer) error {
	if cfg.ranks < 1 {
		return fmt.Errorf("-ranks %d", cfg.ranks)
	}
	// The launcher only hosts the rendezvous: a minimal NPU satisfies the
	// HCCL model, which needs no device memory for that.
	npu, err := fallback.New(fallback.WithDevices(1), fallback.WithDeviceMemory(1<<20), fallback.WithHostMemory(1<<20))
	if err != nil {
		return err
	}
	defer npu.Close()
	sim := hcclsim.New(npu, hcclsim.Options{ConnectTimeout: cfg.timeout, ExecTimeout: cfg.timeout})
	defer sim.Close()
	root, err := sim.GetRootInfo()
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "allreduce: %d rank processes, AllReduce %s fp32 × %d, BatchGet %d rows × %d B\n",
		cfg.ranks, sizeName(cfg.size), cfg.iters, cfg.rows, cfg.rowSize)
	// The ranks' standard error goes to one writer: serialise it, since
	// each child's stream is copied by its own goroutine.
	errOut = &lockedWriter{w: errOut}
	reports := make([]bytes.Buffer, cfg.ranks)
	errs := make([]error, cfg.ranks)
	var wg sync.WaitGroup
	for r := 0; r < cfg.ranks; r++ {
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(),
			envRank+"="+strconv.Itoa(r),
			envRanks+"="+strconv.Itoa(cfg.ranks),
			envJob+"="+encodeJob(cfg))
		cmd.Stdout = &reports[r]
		cmd.Stderr = errOut
		if err := rootpipe.Start(cmd, &root); err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[r] = cmd.Wait()
		}()
	}
	wg.Wait()
	failed := 0
	for r := range reports {
		_, _ = io.Copy(out, &reports[r])
		if errs[r] != nil {
			fmt.Fprintf(out, "rank %d: process failed: %v\n", r, errs[r])
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d ranks failed", failed, cfg.ranks)
	}
	fmt.Fprintln(out, "allreduce: all ranks OK")
	return nil
}

// encodeJob and decodeJob carry the job to the ranks.
func encodeJob(c config) string {
	return fmt.Sprintf("%d,%d,%d,%d,%d", c.size, c.iters, c.rows, c.rowSize, int64(c.timeout))
}

func decodeJob(s string) (config, error) {
	var c config
	var to int64
	_, err := fmt.Sscanf(s, "%d,%d,%d,%d,%d", &c.size, &c.iters, &c.rows, &c.rowSize, &to)
	c.timeout = timeDuration(to)
	return c, err
}

func sizeName(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
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
