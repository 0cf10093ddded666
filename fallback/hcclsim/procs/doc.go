// Package procs runs ranks of the HCCL fallback as separate processes and
// drives them from a parent: the conformance suite, the benchmarks and the
// fault tests use it to exercise the multi-process transport (loopback
// rendezvous, shared-memory data) exactly as a program with one process
// per NPU does.
//
// The parent re-executes its own binary (Start) with an environment
// variable that makes the child serve requests (IsChild, ServeChild) on its
// standard input and output: each child owns a fallback NPU and an HCCL
// model, and executes the calls it receives on one OS thread, as one rank
// of a real program would. Cluster.Backend is an hccl.Backend whose calls
// run in the child that owns the communicator handle (CommInitRootInfo
// runs in the child of the rank it names), so code written against
// hccl.Backend runs unchanged with every rank in its own process. Buffer
// addresses are the children's; the parent never dereferences them.
//
// The request pipe carries only arguments, results and, for Proc.Write and
// Proc.Read, the test data the parent puts into or reads out of a child's
// device memory; the HCCL data path between ranks is the fallback's own.
// Children build their NPUs with shareable device memory, so ranks map
// each other's device memory and move data directly; Options.Staged makes
// them stage it through shared-memory segments instead.
package procs
