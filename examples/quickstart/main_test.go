package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func small() config {
	return config{backend: "fallback", iters: 20, warmup: 2, batch: 8, in: 64, hidden: 16, out: 32}
}

// TestQuickstart runs the program's main logic briefly on the fallback and
// checks its report: correct results, no copies in zero-copy mode, one
// copy in and one out per run in copy mode.
func TestQuickstart(t *testing.T) {
	var out strings.Builder
	require.NoError(t, run(small(), &out))
	report := out.String()
	t.Log("\n" + report)
	assert.Contains(t, report, "backend: fallback")
	assert.Contains(t, report, "result: OK")
	assert.Regexp(t, regexp.MustCompile(`copies/run\s+0\s+2\n`), report)
	assert.Regexp(t, regexp.MustCompile(`bytes copied/run\s+0 B\s+3\.0 KiB\n`), report, "4·(8×64 + 8×32) bytes")
	for _, row := range []string{"p50 latency", "p90 latency", "p99 latency", "max rel. error"} {
		assert.Contains(t, report, row)
	}
}

// TestQuickstartWrongResult: a wrong output makes run fail (and main exit
// with status 1), naming both modes.
func TestQuickstartWrongResult(t *testing.T) {
	cfg := small()
	cfg.corrupt = true
	var out strings.Builder
	err := run(cfg, &out)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "zero-copy mode: 1 of 256 outputs wrong")
	assert.Contains(t, err.Error(), "copy mode: 1 of 256 outputs wrong")
	assert.Contains(t, out.String(), "result: WRONG")
}

func TestQuickstartBadFlags(t *testing.T) {
	cfg := small()
	cfg.backend = "gpu"
	assert.Error(t, run(cfg, &strings.Builder{}))
	cfg = small()
	cfg.iters = 0
	assert.Error(t, run(cfg, &strings.Builder{}))
}
