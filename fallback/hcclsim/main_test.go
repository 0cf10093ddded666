package hcclsim_test

import (
	"os"
	"testing"

	"github.com/ascend-go/cann/fallback/hcclsim/procs"
)

// TestMain turns the test binary into a rank process when a test started
// it as one (procs.Start re-executes the binary).
//
// Parallel tests: the conformance suites mostly wait (timeouts waited out
// on purpose, rank processes), so they and the heaviest tests with worlds
// of their own (their own NPU, Sim or rank processes) call t.Parallel:
// the CPU-bound ones fill the waits. go test starts them only once every
// sequential test has finished, so the tests that count this process's
// goroutines, file descriptors or segment names, or set the environment,
// stay sequential (no t.Parallel) and never overlap a parallel one.
func TestMain(m *testing.M) {
	if procs.IsChild() {
		procs.ServeChild()
	}
	os.Exit(m.Run())
}
