package hccl

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/ascend-go/cann/acl"
)

// The launch environment of an Ascend job: what a cluster scheduler
// (MindCluster) or a launcher sets in every rank process, and what Ascend's
// training frameworks read to call HcclCommInitClusterInfo.
const (
	EnvRankTableFile  = "RANK_TABLE_FILE"  // path of the rank table (hccl.json)
	EnvRankID         = "RANK_ID"          // this process's rank in the table
	EnvRankSize       = "RANK_SIZE"        // ranks in the job (optional; checked against the table)
	EnvDeviceID       = "DEVICE_ID"        // the device this process drives
	EnvAscendDeviceID = "ASCEND_DEVICE_ID" // the same, as some frameworks name it (read when DEVICE_ID is unset)
)

// JobEnv is a rank's launch environment.
type JobEnv struct {
	RankTableFile string
	RankID        int
	RankSize      int // 0 when RANK_SIZE is unset
	DeviceID      int32
}

// ReadJobEnv reads the launch environment. RANK_TABLE_FILE, RANK_ID and a
// device (DEVICE_ID, else ASCEND_DEVICE_ID) are required; a value that is
// not a non-negative decimal, a RANK_SIZE not above RANK_ID, or DEVICE_ID
// and ASCEND_DEVICE_ID both set and different is an HCCL_E_PARA error
// naming the variable.
func ReadJobEnv() (JobEnv, error) {
	const op = "InitFromEnv"
	var e JobEnv
	e.RankTableFile = os.Getenv(EnvRankTableFile)
	if e.RankTableFile == "" {
		return e, Errorf(op, EPara, "%s is not set: the job has no rank table", EnvRankTableFile)
	}
	num := func(name string, max int64) (int64, bool, error) {
		v, ok := os.LookupEnv(name)
		if !ok || strings.TrimSpace(v) == "" {
			return 0, false, nil
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n < 0 || n > max {
			return 0, true, Errorf(op, EPara, "%s=%q is not an integer in 0..%d", name, v, max)
		}
		return n, true, nil
	}
	id, ok, err := num(EnvRankID, 1<<32-1)
	if err != nil {
		return e, err
	}
	if !ok {
		return e, Errorf(op, EPara, "%s is not set", EnvRankID)
	}
	e.RankID = int(id)
	size, ok, err := num(EnvRankSize, 1<<32-1)
	if err != nil {
		return e, err
	}
	if ok && size <= id {
		return e, Errorf(op, EPara, "%s=%d, %s=%d: the rank is outside the job", EnvRankSize, size, EnvRankID, id)
	}
	e.RankSize = int(size)
	dev, okDev, err := num(EnvDeviceID, 1<<31-1)
	if err != nil {
		return e, err
	}
	adev, okA, err := num(EnvAscendDeviceID, 1<<31-1)
	if err != nil {
		return e, err
	}
	switch {
	case okDev && okA && dev != adev:
		return e, Errorf(op, EPara, "%s=%d and %s=%d disagree", EnvDeviceID, dev, EnvAscendDeviceID, adev)
	case okDev:
		e.DeviceID = int32(dev)
	case okA:
		e.DeviceID = int32(adev)
	default:
		return e, Errorf(op, EPara, "neither %s nor %s is set: which device does this rank drive?", EnvDeviceID, EnvAscendDeviceID)
	}
	return e, nil
}

// Job is a rank of a job launched from the environment: its device, a
// stream on it and the communicator formed from the rank table. Close
// releases them. Not safe for concurrent Close; the fields are as safe
// for concurrent use as their types say.
type Job struct {
	Env    JobEnv
	Device *acl.Device
	Stream *acl.Stream
	Comm   *Comm
}

// InitFromEnv starts a rank the way an Ascend job's process does: it reads
// the launch environment (ReadJobEnv), opens DEVICE_ID on rt, creates a
// stream, and joins the communicator of RANK_TABLE_FILE as RANK_ID
// (InitClusterInfo, on the stream's device; opts add WithConfig and the
// like). It blocks until every rank of the table has joined or the
// backend's connect timeout. A RANK_SIZE that disagrees with the table is
// an HCCL_E_PARA error. The same program runs on the fallback (ranks as
// processes of one host) and on a cluster (the native backend, the
// scheduler's rank table).
func InitFromEnv(rt *acl.Runtime, b Backend, opts ...CommOption) (*Job, error) {
	env, err := ReadJobEnv()
	if err != nil {
		return nil, err
	}
	dev, err := rt.OpenDevice(env.DeviceID)
	if err != nil {
		return nil, fmt.Errorf("%s=%d: %w", EnvDeviceID, env.DeviceID, err)
	}
	j := &Job{Env: env, Device: dev}
	if j.Stream, err = dev.NewStream(); err != nil {
		return nil, errors.Join(err, j.Close())
	}
	if j.Comm, err = InitClusterInfo(b, env.RankTableFile, env.RankID, append(opts, OnStream(j.Stream))...); err != nil {
		return nil, errors.Join(err, j.Close())
	}
	if env.RankSize != 0 && j.Comm.Size() != env.RankSize {
		err := Errorf("InitFromEnv", EPara, "%s=%d, the rank table %s has %d ranks", EnvRankSize, env.RankSize, env.RankTableFile, j.Comm.Size())
		return nil, errors.Join(err, j.Close())
	}
	return j, nil
}

// Close destroys the communicator, then the stream and the device.
// Idempotent.
func (j *Job) Close() error {
	if j == nil {
		return nil // nothing to release; Close is idempotent
	}
	var errs []error
	if j.Comm != nil {
		errs = append(errs, j.Comm.Close())
		j.Comm = nil
	}
	if j.Stream != nil {
		errs = append(errs, j.Stream.Close())
		j.Stream = nil
	}
	if j.Device != nil {
		errs = append(errs, j.Device.Close())
		j.Device = nil
	}
	return errors.Join(errs...)
}
