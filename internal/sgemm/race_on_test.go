//go:build race

package sgemm

// raceBuild shrinks the heaviest tests under the race detector, which
// slows plain loops ten times and finds nothing more in them.
const raceBuild = true
