//go:build !race

package hcclsim

const underRace = false
