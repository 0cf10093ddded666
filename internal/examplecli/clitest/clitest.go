// Package clitest runs an example's main in a child process (the test
// binary itself), so a test can see its exit status and its output for a
// command line: a bad flag must end in a one-line error and status 2,
// never a panic, an out-of-memory crash or a hang.
package clitest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const envMain = "EXAMPLECLI_RUN_MAIN"

// MaybeMain runs main instead of the tests when the process is a child
// started by Run; call it first in TestMain. main must end in os.Exit.
func MaybeMain(main func()) {
	if os.Getenv(envMain) == "1" {
		main()
		os.Exit(0)
	}
}

// Result is what the child did.
type Result struct {
	Code           int
	Stdout, Stderr string
}

// Run starts the test binary as the program with args and the extra
// environment env (KEY=VALUE), waits for it (a hang fails after two
// minutes) and returns its exit status and output.
func Run(t *testing.T, env []string, args ...string) Result {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = append(append(os.Environ(), envMain+"=1"), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	require.NoError(t, ctx.Err(), "the program hung: %v\nstderr:\n%s", args, stderr.String())
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return Result{code, stdout.String(), stderr.String()}
}

// Refused runs the program with args and asserts it refused them: exit
// status 2, stderr containing want, no panic or runtime crash.
func Refused(t *testing.T, env []string, want string, args ...string) Result {
	t.Helper()
	r := Run(t, env, args...)
	require.Equal(t, 2, r.Code, "%v: exit status\nstdout:\n%s\nstderr:\n%s", args, r.Stdout, r.Stderr)
	require.Contains(t, r.Stderr, want, "%v", args)
	for _, bad := range []string{"panic", "fatal error", "goroutine "} {
		require.NotContains(t, r.Stderr, bad, "%v", args)
	}
	return r
}
