//go:build !linux || !(amd64 || arm64) || go1.27

package osthread

const haveProcid = false

func procid() int { return 0 }
