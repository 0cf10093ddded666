package cann_test

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	aclnative "github.com/ascend-go/cann/acl/native"
	hcclnative "github.com/ascend-go/cann/hccl/native"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the generated symbol tables of docs/compatibility.md")

// symbolGroup is one library's share of the symbol tables.
type symbolGroup struct {
	title, libs string
	required    []string
	optional    []string
}

func symbolGroups() []symbolGroup {
	return []symbolGroup{
		{"ACL runtime", "`libascendcl.so`, or split `libacl_rt.so`", aclnative.RequiredSymbols(), aclnative.OptionalSymbols()},
		{"ACL model API", "`libascendcl.so`, or split `libacl_mdl.so`", nil, aclnative.ModelSymbols()},
		{"ACL single-op API", "`libascendcl.so` / `libacl_op_compiler.so`, `libacl_op_executor.so`, `libacl_mdl.so`", nil, aclnative.OpSymbols()},
		{"HCCL", "`libhccl.so`, then `libhcomm.so` (per symbol)", hcclnative.RequiredSymbols(), hcclnative.OptionalSymbols()},
	}
}

// disables says what a missing optional symbol turns off. Every optional
// symbol needs an entry, so a new one cannot reach the docs unexplained.
var disables = map[string]string{
	"aclrtSynchronizeStreamWithTimeout": "`SynchronizeStreamWithTimeout`",
	"aclrtCreateEventWithFlag":          "`CreateEventWithFlag` (events with `ACL_EVENT_SYNC` / `ACL_EVENT_TIME_LINE`)",
	"aclrtHostRegister":                 "`HostRegister` (host memory registered for device access: Engram zero-copy storage, `acl.HostRegistration`)",
	"aclrtHostUnregister":               "`HostUnregister`",
	"aclrtHostRegisterV2":               "`HostRegisterV2`",
	"aclrtHostGetDevicePointer":         "`HostGetDevicePointer`",
	"aclGetRecentErrMsg":                "the vendor message in `acl.Error.Msg` (errors keep their code)",
	"aclrtGetSocName":                   "`GetSocName` (it returns \"\")",
	"aclrtGetVersion":                   "`GetVersion` (deprecated in the newest runtime in favour of `aclsysGetVersionStr`)",
	"aclrtResetDeviceForce":             "`ResetDeviceForce`",
	"aclrtSetStreamFailureMode":         "`SetStreamFailureMode` (streams keep the default: continue on failure)",
	"aclrtResetEvent":                   "`Event.Reset`",
	"aclrtDeviceCanAccessPeer":          "`DeviceCanAccessPeer`",
	"aclrtDeviceEnablePeerAccess":       "`DeviceEnablePeerAccess`",
	"aclrtDeviceDisablePeerAccess":      "`DeviceDisablePeerAccess`",
	"HcclCommInitRootInfoConfig":        "`CommInitRootInfoConfig` (communicators with an `HcclCommConfig`)",
	"HcclCommInitAll":                   "`CommInitAll` (one process driving several devices)",
	"HcclCommInitClusterInfoConfig":     "`CommInitClusterInfoConfig` (rank-table communicators with an `HcclCommConfig`)",
	"HcclGetCommName":                   "`GetCommName`",
	"HcclGetCommAsyncError":             "`GetCommAsyncError`",
	"HcclGetErrorString":                "the vendor text of `ErrorString` (it returns the code's built-in name)",
	"HcclBarrier":                       "`Barrier`",
	"HcclAlltoAllV":                     "`AlltoAllV` (and Engram's training fetch)",
	"HcclBatchSendRecv":                 "`BatchSendRecv`",
	// The dynamic-shape half of the model API (acl/model_dynamic.go).
	"aclmdlSetDatasetTensorDesc": "models with unknown dims (`Dataset.SetTensorDesc`: a run's input shapes)",
	"aclmdlGetDatasetTensorDesc": "the outputs' real shapes of models with unknown dims (`Dataset.TensorDesc`)",
	"aclmdlGetInputDimsV2":       "`GetInputDimsV2`",
	"aclmdlGetInputDimsRange":    "the dims ranges of `ModelDesc` (`InputDimsRange` reports none)",
	"aclmdlGetDynamicHW":         "the image-size gears of `ModelDesc` (`HW` is empty)",
	"aclmdlSetDynamicHWSize":     "`Model.SetDynamicHW`",
	"aclmdlSetInputDynamicDims":  "`Model.SetInputDynamicDims`",
	"aclGetTensorDescType":       "`Dataset.TensorDesc` (the type reads as undefined)",
	"aclGetTensorDescFormat":     "`Dataset.TensorDesc` (the format reads as undefined)",
	"aclGetTensorDescNumDims":    "`Dataset.TensorDesc` (no dims)",
	"aclGetTensorDescDimV2":      "`Dataset.TensorDesc`",
}

// groupDisables covers the groups whose symbols are all optional and stand
// or fall together.
func groupDisables(name string) string {
	switch {
	case strings.HasPrefix(name, "aclmdl"), strings.HasPrefix(name, "acl") && strings.Contains(name, "DataBuffer"):
		return "the model API (`acl.ModelBackend`: load, describe, execute models)"
	case strings.HasPrefix(name, "aclop"), strings.Contains(name, "TensorDesc"):
		return "the single-op API (`acl.OpBackend`)"
	case strings.HasPrefix(name, "Hccl") && (strings.Contains(name, "Mem") || strings.HasPrefix(name, "HcclBatchGet") || strings.HasPrefix(name, "HcclBatchPut") || strings.HasPrefix(name, "HcclComm")):
		return "one-sided access (`Window`, `BatchGet`/`BatchPut`, memory registration; Engram across ranks)"
	}
	return ""
}

// renderSymbolTables is the generated part of docs/compatibility.md.
func renderSymbolTables(t *testing.T) string {
	var b strings.Builder
	b.WriteString("<!-- symbols:begin (generated by TestCompatibilityDoc; go test -run TestCompatibilityDoc -update-docs .) -->\n")
	for _, g := range symbolGroups() {
		fmt.Fprintf(&b, "\n### %s — %s\n\n", g.title, g.libs)
		b.WriteString("| symbol | | when missing: `Open` fails (required) or this is disabled (optional) |\n| --- | --- | --- |\n")
		for _, s := range g.required {
			fmt.Fprintf(&b, "| `%s` | required | `Open` fails, naming it |\n", s)
		}
		for _, s := range g.optional {
			d := disables[s]
			if d == "" {
				d = groupDisables(s)
			}
			require.NotEmpty(t, d, "say what a missing %s disables", s)
			fmt.Fprintf(&b, "| `%s` | optional | %s |\n", s, d)
		}
	}
	b.WriteString("\n<!-- symbols:end -->\n")
	return b.String()
}

// TestCompatibilityDoc: docs/compatibility.md carries the symbol tables the
// bindings resolve, generated from RequiredSymbols, OptionalSymbols,
// ModelSymbols and OpSymbols, so the page cannot drift from the code.
func TestCompatibilityDoc(t *testing.T) {
	const path = "docs/compatibility.md"
	want := renderSymbolTables(t)
	doc, err := os.ReadFile(path)
	require.NoError(t, err)
	s := string(doc)
	begin, end := strings.Index(s, "<!-- symbols:begin"), strings.Index(s, "<!-- symbols:end -->")
	require.True(t, begin >= 0 && end > begin, "%s lacks the generated block markers", path)
	got := s[begin : end+len("<!-- symbols:end -->\n")]
	if *updateDocs {
		require.NoError(t, os.WriteFile(path, []byte(s[:begin]+want+s[end+len("<!-- symbols:end -->\n"):]), 0o644))
		return
	}
	for _, g := range symbolGroups() {
		for _, sym := range append(append([]string(nil), g.required...), g.optional...) {
			require.Contains(t, got, "`"+sym+"`", "%s lacks %s; run go test -run TestCompatibilityDoc -update-docs .", path, sym)
		}
	}
	require.Equal(t, want, got, "%s is out of date; run go test -run TestCompatibilityDoc -update-docs .", path)
}
