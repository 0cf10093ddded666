package vmath

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// exp_amd64.s must be exactly what asmgen.go prints now, so neither is
// edited without the other.
func TestAsmgenOutputCommitted(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go tool not on PATH")
	}
	gen := filepath.Join(t.TempDir(), "exp_amd64.s")
	out, err := exec.Command("go", "run", "asmgen.go", "-o", gen).CombinedOutput()
	require.NoError(t, err, string(out))
	got, err := os.ReadFile(gen)
	require.NoError(t, err)
	committed, err := os.ReadFile("exp_amd64.s")
	require.NoError(t, err)
	require.Equal(t, string(got), string(committed),
		"exp_amd64.s is not asmgen.go's output: run go generate ./internal/vmath")
}
