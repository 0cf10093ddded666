package onnx

import "unsafe"

func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(&b[0])) }

func bytesOf(w []uint64) []byte { return unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), 8*len(w)) }
