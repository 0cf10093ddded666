//go:build race

package vmath

// raceBuild shrinks the heaviest tests under the race detector, which
// slows plain loops ten times and finds nothing more in them.
const raceBuild = true
