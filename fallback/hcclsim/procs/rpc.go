package procs

import (
	"errors"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/hccl"
)

// req is one call to a child; fields are used as each Op needs.
type req struct {
	Op       string
	H        uint64 // the child's communicator handle
	S        uint64 // stream
	A, B     uint64 // buffer addresses
	Count    uint64
	DT, DT2  int32
	ROp      int32
	U1, U2   uint32
	Bytes    []byte // root info, config, data
	Vec      [4][]uint64
	Items    []item
	Descs    []oneDesc
	MemDescs [][]byte
	Size     uint64
	Typ      int32
	Peers    []uint32
	Iters    int
	Dev      int32
	Path     string // a rank table's path
}

// item is a hccl.SendRecvItem with the address as a number.
type item struct {
	Type  int32
	Buf   uint64
	Count uint64
	DT    int32
	Peer  uint32
}

// oneDesc is a hccl.OneSideOpDesc with the address as a number.
type oneDesc struct {
	Local, Remote uint64
	Count         uint64
	DT            int32
}

// resp is a child's answer.
type resp struct {
	Err      *wireErr
	U        uint64
	U32      uint32
	Handles  []uint64
	Str      string
	Data     []byte
	MemDescs [][]byte
	Mem      commMem
	Result   int32
	Ns       int64
	Size     uint64
}

type commMem struct {
	Type int32
	Addr uint64
	Size uint64
}

// wireErr carries an *hccl.Error, an *acl.Error or any other error.
type wireErr struct {
	Kind uint8 // 1 hccl, 2 acl, 3 other
	Op   string
	Code int32
	Msg  string
}

func toWire(err error) *wireErr {
	if err == nil {
		return nil
	}
	var he *hccl.Error
	if errors.As(err, &he) {
		return &wireErr{Kind: 1, Op: he.Op, Code: int32(he.Code), Msg: he.Msg}
	}
	var ae *acl.Error
	if errors.As(err, &ae) {
		return &wireErr{Kind: 2, Op: ae.Op, Code: int32(ae.Code), Msg: ae.Msg}
	}
	return &wireErr{Kind: 3, Msg: err.Error()}
}

func (w *wireErr) err() error {
	switch {
	case w == nil:
		return nil
	case w.Kind == 1:
		return &hccl.Error{Op: w.Op, Code: hccl.Result(w.Code), Msg: w.Msg}
	case w.Kind == 2:
		return &acl.Error{Op: w.Op, Code: acl.Code(w.Code), Msg: w.Msg}
	}
	return errors.New(w.Msg)
}
