package hcclsim_test

import (
	"os"
	"testing"

	"github.com/ascend-go/cann/fallback/hcclsim/procs"
)

// TestMain turns the test binary into a rank process when a test started
// it as one (procs.Start re-executes the binary).
func TestMain(m *testing.M) {
	if procs.IsChild() {
		procs.ServeChild()
	}
	os.Exit(m.Run())
}
