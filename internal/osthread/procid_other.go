//go:build !linux || !(amd64 || arm64)

package osthread

const haveProcid = false

func procid() int { return 0 }
