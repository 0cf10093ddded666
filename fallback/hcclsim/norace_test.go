//go:build !race

package hcclsim_test

const raceEnabled = false
