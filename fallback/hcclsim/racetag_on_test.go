//go:build race

package hcclsim

// underRace: the race detector runs atomic operations in its C runtime,
// where a memory fault cannot become a Go panic.
const underRace = true
