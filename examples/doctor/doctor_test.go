package main

import (
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	aclnative "github.com/ascend-go/cann/acl/native"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/ge/getest"
	hcclnative "github.com/ascend-go/cann/hccl/native"
	"github.com/ascend-go/cann/internal/stubbuild"
)

func doctor(t *testing.T, backend string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out strings.Builder
	err := run(ctx, config{backend: backend}, &out)
	t.Log("\n" + out.String())
	return out.String(), err
}

// stubs points the bindings at the C stubs (compiled by stubbuild), the
// variant of the ACL stub chosen by defines.
func stubs(t *testing.T, defines ...string) {
	t.Helper()
	root := filepath.Join("..", "..")
	acl := stubbuild.BuildWith(t, filepath.Join(root, "acl", "native", "testdata", "stub"), aclnative.LibACL, stubbuild.Options{Defines: defines})
	hc := stubbuild.Build(t, filepath.Join(root, "hccl", "native", "testdata", "stub"), hcclnative.LibHCCL)
	t.Setenv(aclnative.EnvLibrary, acl)
	t.Setenv(hcclnative.EnvLibrary, hc)
}

func TestDoctorFallback(t *testing.T) {
	out, err := doctor(t, "fallback")
	require.NoError(t, err)
	for _, want := range []string{"backend: fallback", "version: ", "soc: ", "devices: 2"} {
		assert.Contains(t, out, want)
	}
	for _, check := range []string{"memory", "streams", "model", "hccl"} {
		assert.Regexp(t, `smoke `+check+` +ok `, out)
	}
}

// TestDoctorStub: over the C stubs the report names both libraries, counts
// every required symbol present, and the smoke checks pass (the model check
// skips: the stub, like CANN, does not take the SDK's model format, and
// says why).
func TestDoctorStub(t *testing.T) {
	stubs(t)
	out, err := doctor(t, "native")
	require.NoError(t, err)
	assert.Contains(t, out, "acl library: ")
	assert.Contains(t, out, "hccl library: ")
	n, m := len(aclnative.RequiredSymbols()), len(hcclnative.RequiredSymbols())
	assert.Contains(t, out, "acl symbols required: "+itoa(n)+"/"+itoa(n)+" present")
	assert.Contains(t, out, "hccl symbols required: "+itoa(m)+"/"+itoa(m)+" present")
	assert.Regexp(t, `smoke memory +ok `, out)
	assert.Regexp(t, `smoke streams +ok `, out)
	assert.Regexp(t, `smoke model +skip .*not a stub model`, out)
	assert.Regexp(t, `smoke hccl +ok `, out)
}

// TestDoctorMissingRequired: a library without required symbols fails, and
// the error names them; the program exits non-zero.
func TestDoctorMissingRequired(t *testing.T) {
	stubs(t, "STUB_OMIT_REQUIRED")
	_, err := doctor(t, "native")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "aclrtMemsetAsync, aclrtGetMemInfo")

	if testing.Short() {
		return
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run=^TestDoctorMain$")
	cmd.Env = append(os.Environ(), "DOCTOR_MAIN=1", "CANN_BACKEND=native")
	b, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "%s", b)
	assert.Equal(t, 1, ee.ExitCode())
	assert.Contains(t, string(b), "aclrtMemsetAsync")
}

// TestDoctorMain runs main when DOCTOR_MAIN is set (by
// TestDoctorMissingRequired, to see the exit status).
func TestDoctorMain(t *testing.T) {
	if os.Getenv("DOCTOR_MAIN") == "" {
		t.Skip("run by TestDoctorMissingRequired")
	}
	os.Args = os.Args[:1]
	main()
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestDoctorModelFile: -model loads and runs the given file (here a ge
// model on the fallback), and a file that is not a model fails the check.
func TestDoctorModelFile(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	m, err := ge.Compile(getest.MLP(rng, acl.Float32, 4, 16, 8))
	require.NoError(t, err)
	blob, err := m.MarshalBinary()
	require.NoError(t, err)
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "mlp.model"), filepath.Join(dir, "junk.om")
	require.NoError(t, os.WriteFile(good, blob, 0o644))
	require.NoError(t, os.WriteFile(bad, []byte("not a model"), 0o644))
	var out strings.Builder
	require.NoError(t, run(context.Background(), config{backend: "fallback", model: good}, &out))
	assert.Regexp(t, `smoke model +ok .*mlp.model: 1 inputs, 1 outputs, one execution`, out.String())
	out.Reset()
	err = run(context.Background(), config{backend: "fallback", model: bad}, &out)
	require.ErrorContains(t, err, "smoke test failed: model")
	assert.Regexp(t, `smoke model +FAIL `, out.String())
}
