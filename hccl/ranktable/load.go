package ranktable

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ascend-go/cann/hccl"
)

// LoadOptions configure Load.
type LoadOptions struct {
	Options
	// Wait bounds the wait for status "completed". HCCL waits
	// HCCL_RANKTABLE_TIMEOUT_S, 30 minutes (topoinfo_ranktableParser.cc:36);
	// the fallback passes its connect timeout so that a job whose table
	// never completes fails as its ranks would fail to connect. Zero
	// means 30 minutes.
	Wait time.Duration
	// Poll is the interval between reads while the status is not
	// "completed" (HCCL: 1 s, topoinfo_ranktableParser.cc:200). Zero
	// means 1 s, capped at a tenth of Wait.
	Poll time.Duration
}

// Load reads the rank table at path as HcclCommInitClusterInfo loads it
// (TopoInfoRanktableParser::LoadFile, topoinfo_ranktableParser.cc:145-205):
// an empty path is HCCL_E_PARA, a path without the .json suffix
// HCCL_E_INTERNAL, a path that does not resolve HCCL_E_PARA; then it reads
// the file until its status is "completed" (a scheduler writes
// "initializing" first and rewrites the file), failing with HCCL_E_TIMEOUT
// naming the file and the last status when Wait passes or ctx ends; an
// unreadable file or malformed JSON is HCCL_E_PARA at once. The completed
// table is then parsed (Parse).
func Load(ctx context.Context, path string, opt LoadOptions) (*Table, error) {
	if path == "" {
		return nil, errf(hccl.EPara, "empty rank table path")
	}
	if !strings.HasSuffix(path, ".json") { // CheckFilePath (:155-160)
		return nil, errf(hccl.EInternal, "rank table %s is not a .json file", path)
	}
	real, err := filepath.EvalSymlinks(path) // realpath (:162-168)
	if err != nil {
		return nil, errf(hccl.EPara, "rank table %s: %v", path, err)
	}
	if real, err = filepath.Abs(real); err != nil {
		return nil, errf(hccl.EPara, "rank table %s: %v", path, err)
	}
	wait := opt.Wait
	if wait <= 0 {
		wait = 30 * time.Minute
	}
	poll := opt.Poll
	if poll <= 0 {
		poll = min(time.Second, max(wait/10, time.Millisecond))
	}
	deadline := time.Now().Add(wait)
	for {
		data, err := readBounded(real)
		if err != nil {
			return nil, errf(hccl.EPara, "rank table %s: %v", path, err)
		}
		top, status, err := head(data)
		if err != nil {
			return nil, within(path, err)
		}
		if status == StatusCompleted {
			t, err := parseBody(top, status, data, opt.Options)
			if err != nil {
				return nil, within(path, err)
			}
			return t, nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			return nil, errf(hccl.ETimeout, "rank table %s: status is still %q, not %q, after %v", path, status, StatusCompleted, wait)
		}
		tm := time.NewTimer(min(poll, left))
		select {
		case <-tm.C:
		case <-ctx.Done():
			tm.Stop()
			return nil, errf(hccl.ETimeout, "rank table %s: status is still %q, not %q: %v", path, status, StatusCompleted, ctx.Err())
		}
	}
}

// readBounded reads a regular file of at most MaxFileBytes.
func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("larger than %d bytes", MaxFileBytes)
	}
	return data, nil
}

// within prefixes the message of a parse error with the file's path.
func within(path string, err error) error {
	var e *hccl.Error
	if errors.As(err, &e) {
		return &hccl.Error{Op: e.Op, Code: e.Code, Msg: "rank table " + path + ": " + e.Msg}
	}
	return fmt.Errorf("rank table %s: %w", path, err)
}
