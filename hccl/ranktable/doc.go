// Package ranktable reads rank tables (the hccl.json a cluster scheduler
// writes and HcclCommInitClusterInfo takes) with the rules and result codes
// of HCCL's own parser, so that a table the device would refuse is refused
// here too, with the same HcclResult.
//
// The rules follow hicann/hcomm's legacy topology parser (cited as it is
// mirrored in libochao-huawei/hcomm @8958adbf, files under
// src/legacy/ascend910/framework/common/src/): topo/topoinfo_ranktableParser.cc
// (loading, the status wait), config.cc (version dispatch, rank
// continuity) and topo/topoinfo_ranktableConcise.cc (versions 1.0 and 1.2).
// Each check below names its line; docs/misuse.md lists them as a table.
//
// Versions 1.0 (server_list of devices) and 1.2 (A3 super pods: the same
// plus super_device_id and super_pod_list) are read. A table without a
// version (HCCL's "Standard" format) or of version 1.1 (heterogeneous) is
// one HCCL parses with other readers; this package refuses it with
// HCCL_E_NOT_SUPPORT and says so, as HCCL does for versions it does not
// know (config.cc:52-60).
//
// Everything here is a plain function of its input; Table values are
// immutable after Parse and safe for concurrent use.
package ranktable
