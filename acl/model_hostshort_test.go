package acl_test

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge/getest"
)

// TestModelShortHostIORefused: a pinned host buffer shorter than its tensor
// is refused before anything runs, for Execute and ExecuteAsync, inputs and
// outputs. The device copy a Model stages it through would take the
// model's full tensor in its padding and the copy back (or in) would drop
// the bytes past the host buffer: GE's size rule lets a device buffer up
// to 64 bytes short through only because the device's allocation holds
// them (hicann/ge davinci_model.cc:6588-6601); the host buffer does not.
// Up to 64 bytes short is 145000 (as the fallback's "following bytes not
// in its allocation" row, docs/misuse.md); more is GE's 500002.
func TestModelShortHostIORefused(t *testing.T) {
	r := newRig(t, mlp(8, 8, 16, 12))
	d, p, m, st := r.d, r.p, r.m, r.st
	ins, outs := p.InSizes(), p.OutSizes()
	host := func(t *testing.T, sizes []uintptr) []acl.Memory {
		var ms []acl.Memory
		for _, n := range sizes {
			ms = append(ms, hostMem(t, d, n))
		}
		return ms
	}
	run := func(t *testing.T, async bool, inSizes, outSizes []uintptr) ([]acl.Memory, error) {
		in, out := host(t, inSizes), host(t, outSizes)
		x, b := getest.RandF32(r.rng, p.M*p.K), getest.RandF32(r.rng, p.M*p.N)
		copy(in[0].(*acl.HostBuffer).Bytes(), getest.F32Bytes(x))
		copy(in[1].(*acl.HostBuffer).Bytes(), getest.F32Bytes(b))
		inDS, err := d.NewDatasetOf(in...)
		require.NoError(t, err)
		outDS, err := d.NewDatasetOf(out...)
		require.NoError(t, err)
		if async {
			if err := m.ExecuteAsync(st, inDS, outDS); err != nil {
				return nil, err
			}
			return out, st.Synchronize()
		}
		return out, m.Execute(inDS, outDS)
	}
	short := func(sizes []uintptr, i int, by uintptr) []uintptr {
		s := append([]uintptr(nil), sizes...)
		s[i] -= by
		return s
	}
	for _, async := range []bool{false, true} {
		name := map[bool]string{false: "Execute", true: "ExecuteAsync"}[async]
		t.Run(name, func(t *testing.T) {
			for i := range outs {
				_, err := run(t, async, ins, short(outs, i, 1))
				require.Equal(t, acl.CodeGEParamInvalid, acl.CodeOf(err), "%v", err)
				require.ErrorContains(t, err, "output")
				_, err = run(t, async, ins, short(outs, i, 64))
				require.Equal(t, acl.CodeGEParamInvalid, acl.CodeOf(err), "%v", err)
				_, err = run(t, async, ins, short(outs, i, 68))
				require.Equal(t, acl.CodeGEFailure, acl.CodeOf(err), "%v", err)
			}
			for i := range ins {
				_, err := run(t, async, short(ins, i, 4), outs)
				require.Equal(t, acl.CodeGEParamInvalid, acl.CodeOf(err), "%v", err)
				require.ErrorContains(t, err, "input")
			}
			// Full-size host buffers still run.
			_, err := run(t, async, ins, outs)
			require.NoError(t, err)
		})
	}
}

// TestModelExecuteAsyncEmptyOutput: an output made with
// NewDataBufferPtr(nil, 0) is allocated by Execute (aclmdlExecute) and
// refused by ExecuteAsync with aclmdlExecuteAsync's code, before anything
// is queued (hicann/ge api/acl/acl_model/model/model.cpp:781: only the
// synchronous path allocates; davinci_model.cc:6588-6601 refuses the empty
// buffer, 500002).
func TestModelExecuteAsyncEmptyOutput(t *testing.T) {
	r := newRig(t, mlp(8, 8, 16, 12))
	d, p, st := r.d, r.p, r.st
	outs := p.OutSizes()
	require.Greater(t, outs[0], uintptr(64), "a tensor the size rule refuses empty")
	r.v.fill(t, r.rng, p)
	empty, err := d.NewDataBufferPtr(nil, 0)
	require.NoError(t, err)
	rest := devMem(t, d, outs[1])
	restBuf, err := d.NewDataBuffer(rest)
	require.NoError(t, err)
	out, err := d.NewDataset()
	require.NoError(t, err)
	require.NoError(t, out.Add(empty))
	require.NoError(t, out.Add(restBuf))

	err = r.m.ExecuteAsync(st, r.v.inDS, out)
	require.Equal(t, acl.CodeGEFailure, acl.CodeOf(err), "%v", err)
	require.NoError(t, st.Synchronize())
	require.Nil(t, empty.Addr(), "ExecuteAsync allocates no output")
	got := make([]byte, outs[1])
	require.NoError(t, rest.CopyToHost(got))
	require.Equal(t, make([]byte, outs[1]), got, "nothing ran")

	// Execute on a model that has not run asynchronously allocates it.
	m2, err := d.LoadModel(p.Blob)
	require.NoError(t, err)
	require.NoError(t, m2.Execute(r.v.inDS, out))
	require.NotNil(t, empty.Addr())
	require.Equal(t, outs[0], empty.Size())
	y := make([]byte, outs[0])
	require.NoError(t, d.Do(func() error {
		return r.npu.Memcpy(unsafe.Pointer(&y[0]), outs[0], empty.Addr(), outs[0], acl.MemcpyDeviceToHost)
	}))
	requireClose(t, r.v.wantY, getest.BytesF32(y), "y")
	require.NoError(t, d.Do(func() error { return r.npu.Free(empty.Addr()) }))
}
