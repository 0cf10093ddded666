package hcclsim_test

import (
	"os"
	"testing"

	"github.com/ascend-go/cann/fallback/hcclsim/procs"
)

// TestMain turns the test binary into a rank process when a test started
// it as one (procs.Start re-executes the binary).
//
// Parallel tests: the package's long tests mostly wait (timeouts waited
// out on purpose, rank processes), so the ones with a world of their own
// (their own NPU, Sim or rank processes) call t.Parallel. go test starts
// them only once every sequential test has finished, so the tests that
// count this process's goroutines, file descriptors or segment names, or
// set the environment, stay sequential (no t.Parallel) and never overlap
// a parallel one.
func TestMain(m *testing.M) {
	if procs.IsChild() {
		procs.ServeChild()
	}
	os.Exit(m.Run())
}
