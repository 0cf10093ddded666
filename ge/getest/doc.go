// Package getest holds test helpers for compiled models: a host-memory
// reference interpreter, a brute-force checker of the memory plan and a
// random graph generator. Executors (the fallback) can compare against the
// interpreter; the checker proves a plan sound independently of the planner.
//
// All functions are safe for concurrent use on distinct arguments.
package getest
