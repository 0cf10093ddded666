//go:build !race

package vmath

const raceBuild = false
