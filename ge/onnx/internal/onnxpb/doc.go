// Package onnxpb holds the Go types generated from the ONNX schema
// (onnx.proto of ONNX 1.12, IR version 8, Apache-2.0, Copyright (c) ONNX
// Project Contributors) by protoc-gen-go. Regenerate with go generate after
// replacing onnx.proto; never edit onnx.pb.go by hand.
package onnxpb

//go:generate protoc --go_out=. --go_opt=paths=source_relative --go_opt=Monnx.proto=github.com/ascend-go/cann/ge/onnx/internal/onnxpb onnx.proto
