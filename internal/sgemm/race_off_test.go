//go:build !race

package sgemm

const raceBuild = false
