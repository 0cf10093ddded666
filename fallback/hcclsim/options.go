package hcclsim

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Options configure a Sim (a plain value, copied by New). Zero fields take
// the HCCL environment variables as the device reads them, then the
// device's defaults; a fallback-only switch (ShortDefaults, or
// CANN_HCCLSIM_SHORT_TIMEOUTS=1) shortens the defaults for CI.
type Options struct {
	// ExecTimeout bounds how long an operation's stream task waits for its
	// peers (collectives, send/recv, one-sided requests) before the stream
	// fails with ACL_ERROR_RT_FFTS_PLUS_TIMEOUT (507048). Default:
	// HCCL_EXEC_TIMEOUT seconds (fractions accepted, 0 = never), else
	// 1836 s. Negative: never. A communicator's HcclCommConfig
	// hcclExecTimeOut overrides it.
	ExecTimeout time.Duration
	// ConnectTimeout bounds communicator initialisation and the link
	// building of a communicator's first operation (HCCL_E_TIMEOUT).
	// Default: HCCL_CONNECT_TIMEOUT seconds, which the device accepts in
	// [120, 7200] only (otherwise every initialisation fails with
	// HCCL_E_PARA), else 120 s. The option itself takes any positive
	// value, so tests can be short.
	ConnectTimeout time.Duration
	// BufferBytes is the staging memory of each rank of a multi-process
	// communicator. Default: HCCL_BUFFSIZE MB (at least 1, else
	// HCCL_E_PARA at initialisation), capped at 64 MiB; else 64 MiB (the
	// device's default is 200 MB, which the staging area does not need:
	// larger transfers move in pieces).
	BufferBytes int
	// ShmDir is where segments are created. Default /dev/shm.
	ShmDir string
	// Link, when set, charges one-sided transfers between ranks the
	// model's latency and bandwidth (see LinkModel). Default: off.
	Link *LinkModel
	// InconsistentCheck is "first", "on" or "off": when ranks issuing
	// different operations are detected (HCCL_DFS_CONFIG
	// inconsistent_check). Default: HCCL_DFS_CONFIG, else "first".
	InconsistentCheck string
	// ShortDefaults (fallback only; also CANN_HCCLSIM_SHORT_TIMEOUTS=1)
	// makes the defaults of unset timeouts 30 s instead of the device's
	// 1836 s and 120 s, so a CI run that loses a rank fails in seconds,
	// not half an hour. Explicit options and environment variables win.
	ShortDefaults bool
	// Pedantic refuses what the device lets through but silently gets
	// wrong, with an error whose message starts "pedantic:" and says what
	// the device would have done (the HCCL side of fallback.WithPedantic):
	// a one-sided batch with a bad descriptor after good ones (the device
	// has already moved the good ones; here the whole batch is refused
	// before anything moves), and an ExchangeMemDesc whose peer sends
	// more descriptors than the remote array holds (the device writes
	// past its end; here HCCL_E_PARA). Default: off, the device's outcome.
	Pedantic bool
	// SocName is the SoC of the model's devices, which decides the
	// features of one generation: the buffer windows of HcclCommRegister
	// exist on an Atlas A3 only (hcomm legacy
	// hccl_communicator_host.cc:9282,9306,9329), elsewhere they are
	// HCCL_E_NOT_SUPPORT. Default: the NPU's SoC (fallback.WithSocName,
	// whose default DefaultSocName is an A3, the device the docs promise
	// windows on); "Ascend910B1" models an Atlas A2.
	SocName string
}

// Device defaults and limits (hcomm legacy tree, src/legacy/ascend910/:
// platform/common/externalinput.cc:530-563 HCCL_CONNECT_TIMEOUT in
// [HCCL_MIN_LINK_TIME_OUT_S, HCCL_MAX_LINK_TIME_OUT_S]; NOTIFY_DEFAULT_WAIT_TIME
// 1836 s, externalinput.cc:511; HCCL_BUFFSIZE default 200 MB).
const (
	defaultExecTimeout    = 1836 * time.Second
	defaultConnectTimeout = 120 * time.Second
	minConnectTimeout     = 120 * time.Second
	maxConnectTimeout     = 7200 * time.Second
	shortDefaultTimeout   = 30 * time.Second
	// never is the timeout of "no timeout" (HCCL_EXEC_TIMEOUT=0): long
	// enough never to fire, short enough for time arithmetic.
	never = 100 * 365 * 24 * time.Hour
)

// Inconsistency check modes (env_config.h:27-31).
const (
	checkFirst = "first"
	checkOn    = "on"
	checkOff   = "off"
)

// withDefaults fills zero fields from the environment and the defaults.
// A malformed HCCL variable is returned as an error (HCCL_E_PARA), which
// communicator initialisation reports; the field then takes its default.
func (o Options) withDefaults() (Options, error) {
	var envErr error
	keep := func(err error) {
		if envErr == nil {
			envErr = err
		}
	}
	short := o.ShortDefaults || os.Getenv("CANN_HCCLSIM_SHORT_TIMEOUTS") == "1"
	execDef, connDef := defaultExecTimeout, defaultConnectTimeout
	if short {
		execDef, connDef = shortDefaultTimeout, shortDefaultTimeout
	}
	switch {
	case o.ExecTimeout < 0:
		o.ExecTimeout = never
	case o.ExecTimeout == 0:
		d, err := parseExecTimeout(os.Getenv("HCCL_EXEC_TIMEOUT"), execDef)
		keep(err)
		o.ExecTimeout = d
	}
	if o.ConnectTimeout <= 0 {
		d, err := parseConnectTimeout(os.Getenv("HCCL_CONNECT_TIMEOUT"), connDef)
		keep(err)
		o.ConnectTimeout = d
	}
	if o.BufferBytes <= 0 {
		o.BufferBytes = 64 << 20
		if v := os.Getenv("HCCL_BUFFSIZE"); v != "" {
			mb, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || mb < 1 {
				keep(errf(codePara, "HCCL_BUFFSIZE %q: want a whole number of MB, at least 1", v))
			} else {
				o.BufferBytes = stageBytes(min(mb, 64))
			}
		}
	}
	o.BufferBytes = max(o.BufferBytes, 64<<10) / 4096 * 4096
	if o.SocName == "" {
		o.SocName = DefaultSocName
	}
	if o.ShmDir == "" {
		o.ShmDir = "/dev/shm"
	}
	switch o.InconsistentCheck {
	case checkFirst, checkOn, checkOff:
	case "":
		o.InconsistentCheck = parseDFSCheck(os.Getenv("HCCL_DFS_CONFIG"))
	default:
		keep(errf(codePara, "Options.InconsistentCheck %q: want first, on or off", o.InconsistentCheck))
		o.InconsistentCheck = checkFirst
	}
	return o, envErr
}

// parseExecTimeout reads HCCL_EXEC_TIMEOUT: seconds, fractions accepted,
// 0 = never, at most 2^31-1 on A2/A3 (externalinput.cc:972-1000).
func parseExecTimeout(v string, def time.Duration) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return def, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 || f > 1<<31-1 || strings.ContainsAny(v, "eEnNxX") {
		return def, errf(codePara, "HCCL_EXEC_TIMEOUT %q: want seconds in [0, 2147483647]", v)
	}
	if f == 0 {
		return never, nil
	}
	return max(time.Duration(f*float64(time.Second)), time.Millisecond), nil
}

// parseConnectTimeout reads HCCL_CONNECT_TIMEOUT: whole seconds in [120,
// 7200], anything else is HCCL_E_PARA (externalinput.cc:530-563).
func parseConnectTimeout(v string, def time.Duration) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	d := time.Duration(n) * time.Second
	if err != nil || strings.HasPrefix(v, "+") || d < minConnectTimeout || d > maxConnectTimeout {
		return def, errf(codePara, "HCCL_CONNECT_TIMEOUT %q: want whole seconds in [120, 7200]", v)
	}
	return d, nil
}

// parseDFSCheck reads inconsistent_check of HCCL_DFS_CONFIG as the device
// does (env_config.cc:642-740): spaces removed, lower-cased, the value runs
// to the next comma; an unknown value keeps the default (a warning there).
func parseDFSCheck(v string) string {
	v = strings.ToLower(strings.ReplaceAll(v, " ", ""))
	const key = "inconsistent_check:"
	i := strings.Index(v, key)
	if i < 0 {
		return checkFirst
	}
	val, _, _ := strings.Cut(v[i+len(key):], ",")
	switch val {
	case checkOn, checkOff, checkFirst:
		return val
	}
	return checkFirst
}

// String describes the timeouts for messages.
func fmtTimeout(d time.Duration) string {
	if d >= never {
		return "never"
	}
	return fmt.Sprint(d)
}

// stageBytes is the staging memory of a rank for a buffer size of mb MB
// (HCCL_BUFFSIZE, hcclBufferSize), already capped by the caller.
func stageBytes(mb int) int { return mb << 20 }
