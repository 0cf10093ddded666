package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge/getest"
	"github.com/ascend-go/cann/hccl"
)

// checkHCCL runs an AllReduce (float32 sum) of random vectors on devices 0
// and 1, one rank each, and compares every element with the sum computed on
// the host. hb is the HCCL backend cann.Open picked beside the ACL one.
func checkHCCL(ctx context.Context, rt *acl.Runtime, hb hccl.Backend, rng *rand.Rand) (string, error) {
	const ranks, count = 2, 1 << 16
	root, err := hb.GetRootInfo()
	if err != nil {
		return "", err
	}
	data := make([][]float32, ranks)
	want := make([]float32, count)
	for r := range data {
		data[r] = getest.RandF32(rng, count)
		for i, v := range data[r] {
			want[i] += v
		}
	}
	got := make([][]byte, ranks)
	errs := make([]error, ranks)
	var wg sync.WaitGroup
	for r := range ranks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[r] = allReduceRank(ctx, rt, hb, &root, r, ranks, getest.F32Bytes(data[r]), &got[r])
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return "", err
	}
	for r := range ranks {
		for i, v := range getest.BytesF32(got[r]) {
			if v != want[i] {
				return "", fmt.Errorf("rank %d element %d: %v, want %v", r, i, v, want[i])
			}
		}
	}
	return fmt.Sprintf("AllReduce sum of %d float32 on %d ranks equals the host sum", count, ranks), nil
}

func allReduceRank(ctx context.Context, rt *acl.Runtime, hb hccl.Backend, root *hccl.RootInfo, r, n int, in []byte, out *[]byte) error {
	dev, err := rt.OpenDevice(int32(r))
	if err != nil {
		return err
	}
	defer dev.Close()
	buf, err := dev.Malloc(uintptr(len(in)), acl.MemMallocHugeFirst)
	if err != nil {
		return err
	}
	defer buf.Close()
	if err := buf.CopyFromHost(in); err != nil {
		return err
	}
	s, err := dev.NewStream()
	if err != nil {
		return err
	}
	defer s.Close()
	err = dev.Do(func() error {
		c, err := hccl.InitRootInfo(hb, root, n, r, hccl.WithStream(s.Handle()))
		if err != nil {
			return err
		}
		// The collective is queued on the stream (failures show at the
		// synchronize, as on the device); wait for it before destroying
		// the communicator and reading the result.
		err = c.AllReduce(ctx, buf.Ptr(), buf.Ptr(), uint64(len(in)/4), hccl.Float32, hccl.Sum)
		if err == nil {
			err = rt.Backend().SynchronizeStream(s.Handle())
		}
		return errors.Join(err, c.Close())
	})
	if err != nil {
		return fmt.Errorf("rank %d: %w", r, err)
	}
	*out = make([]byte, len(in))
	return buf.CopyToHost(*out)
}
