package hcclsim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOptionDefaults: options, then the HCCL variables, then the device's
// defaults (1836 s exec, 120 s connect: externalinput.cc:511-563), or 30 s
// with the fallback's CI switch; 0 exec timeout is never.
func TestOptionDefaults(t *testing.T) {
	for _, v := range []string{"HCCL_EXEC_TIMEOUT", "HCCL_CONNECT_TIMEOUT", "HCCL_BUFFSIZE", "HCCL_DFS_CONFIG", "CANN_HCCLSIM_SHORT_TIMEOUTS"} {
		t.Setenv(v, "")
	}
	o, err := Options{}.withDefaults()
	require.NoError(t, err)
	assert.Equal(t, 1836*time.Second, o.ExecTimeout)
	assert.Equal(t, 120*time.Second, o.ConnectTimeout)
	assert.Equal(t, checkFirst, o.InconsistentCheck)

	o, err = Options{ShortDefaults: true}.withDefaults()
	require.NoError(t, err)
	assert.Equal(t, 30*time.Second, o.ExecTimeout)
	assert.Equal(t, 30*time.Second, o.ConnectTimeout)

	t.Setenv("CANN_HCCLSIM_SHORT_TIMEOUTS", "1")
	t.Setenv("HCCL_EXEC_TIMEOUT", "2.5")
	o, err = Options{}.withDefaults()
	require.NoError(t, err)
	assert.Equal(t, 2500*time.Millisecond, o.ExecTimeout, "the variable wins over the CI switch")
	assert.Equal(t, 30*time.Second, o.ConnectTimeout)

	t.Setenv("HCCL_EXEC_TIMEOUT", "0")
	o, err = Options{}.withDefaults()
	require.NoError(t, err)
	assert.Equal(t, never, o.ExecTimeout)
	o, err = Options{ExecTimeout: -1}.withDefaults()
	require.NoError(t, err)
	assert.Equal(t, never, o.ExecTimeout)
	o, err = Options{ExecTimeout: time.Second, ConnectTimeout: time.Second}.withDefaults()
	require.NoError(t, err)
	assert.Equal(t, time.Second, o.ExecTimeout, "options win over the variables")
	assert.Equal(t, time.Second, o.ConnectTimeout, "options take any value, below the variable's 120 s too")

	_, err = Options{InconsistentCheck: "sometimes"}.withDefaults()
	assert.Equal(t, codePara, codeOf(err))
}

// TestParseDFSCheck: HCCL_DFS_CONFIG as env_config.cc:642-740 reads it.
func TestParseDFSCheck(t *testing.T) {
	for in, want := range map[string]string{
		"":                      checkFirst,
		"inconsistent_check:on": checkOn,
		"cluster_heartbeat:off,inconsistent_check:off":  checkOff,
		" Inconsistent_Check : ON , stuck_detection:on": checkOn,
		"inconsistent_check:first":                      checkFirst,
		"inconsistent_check:maybe":                      checkFirst,
		"inconsistent_check:on_and_more":                checkFirst,
	} {
		assert.Equal(t, want, parseDFSCheck(in), "%q", in)
	}
}
