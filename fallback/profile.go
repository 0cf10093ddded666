package fallback

import (
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	"github.com/google/pprof/profile"

	"github.com/ascend-go/cann/acl"
)

// The device-time profile: with WithDeviceProfile, every model task's
// kernel time is added up per (model, op name, op type, stream) and
// WriteDeviceProfile writes it as a pprof profile, so
//
//	go tool pprof -top devprof.pb.gz
//
// lists the ops by device time. The call stack of a sample is stream →
// model → op type → op name, so -top shows op names as the flat entries
// and -peek or the graph views group them by type, model and stream. Off
// by default; then a task pays one nil check.

// WithDeviceProfile makes the NPU record each model task's device time
// for WriteDeviceProfile.
func WithDeviceProfile() Option { return func(c *config) { c.profile = true } }

type profKey struct {
	model, op, opType string
	stream            acl.StreamHandle
}

type profVal struct {
	count int64
	ns    int64
}

// deviceProfile accumulates task times; safe for concurrent use.
type deviceProfile struct {
	mu    sync.Mutex
	start time.Time
	m     map[profKey]*profVal
}

func newDeviceProfile(now time.Time) *deviceProfile {
	return &deviceProfile{start: now, m: map[profKey]*profVal{}}
}

func (p *deviceProfile) add(k profKey, d time.Duration) {
	p.mu.Lock()
	v := p.m[k]
	if v == nil {
		v = &profVal{}
		p.m[k] = v
	}
	v.count++
	v.ns += int64(d)
	p.mu.Unlock()
}

// WriteDeviceProfile writes the device time recorded since New (or the
// last ResetDeviceProfile) as a gzipped pprof profile with two sample
// values: tasks (count) and device time (nanoseconds). Without
// WithDeviceProfile it fails with ACL_ERROR_FEATURE_UNSUPPORTED.
func (n *NPU) WriteDeviceProfile(w io.Writer) error {
	if n == nil {
		return acl.NilHandle("WriteDeviceProfile", "fallback NPU")
	}
	p := n.prof
	if p == nil {
		return acl.Errorf("WriteDeviceProfile", acl.CodeFeatureUnsupported, "the NPU was created without WithDeviceProfile")
	}
	p.mu.Lock()
	keys := make([]profKey, 0, len(p.m))
	vals := make(map[profKey]profVal, len(p.m))
	for k, v := range p.m {
		keys = append(keys, k)
		vals[k] = *v
	}
	start := p.start
	p.mu.Unlock()
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.stream != b.stream {
			return a.stream < b.stream
		}
		if a.model != b.model {
			return a.model < b.model
		}
		if a.opType != b.opType {
			return a.opType < b.opType
		}
		return a.op < b.op
	})
	prof := &profile.Profile{
		SampleType:        []*profile.ValueType{{Type: "tasks", Unit: "count"}, {Type: "device_time", Unit: "nanoseconds"}},
		DefaultSampleType: "device_time",
		PeriodType:        &profile.ValueType{Type: "device_time", Unit: "nanoseconds"},
		Period:            1,
		TimeNanos:         start.UnixNano(),
		DurationNanos:     int64(time.Since(start)),
	}
	funcs := map[string]*profile.Location{}
	loc := func(name string) *profile.Location {
		if l := funcs[name]; l != nil {
			return l
		}
		f := &profile.Function{ID: uint64(len(prof.Function) + 1), Name: name, SystemName: name}
		prof.Function = append(prof.Function, f)
		l := &profile.Location{ID: uint64(len(prof.Location) + 1), Line: []profile.Line{{Function: f}}}
		prof.Location = append(prof.Location, l)
		funcs[name] = l
		return l
	}
	for _, k := range keys {
		v := vals[k]
		stream := fmt.Sprintf("stream 0x%x", uintptr(k.stream))
		if k.stream == 0 {
			stream = "synchronous execute"
		}
		model := "model " + k.model
		opType := model + " / " + k.opType
		// Leaf first: the op, its type, its model, its stream.
		prof.Sample = append(prof.Sample, &profile.Sample{
			Location: []*profile.Location{loc(opType + " / " + k.op), loc(opType), loc(model), loc(stream)},
			Value:    []int64{v.count, v.ns},
			Label:    map[string][]string{"model": {k.model}, "op": {k.op}, "op_type": {k.opType}, "stream": {stream}},
		})
	}
	if err := prof.CheckValid(); err != nil {
		return acl.Errorf("WriteDeviceProfile", acl.CodeInternalError, "%v", err)
	}
	return prof.Write(w)
}

// ResetDeviceProfile clears what the device profile recorded.
func (n *NPU) ResetDeviceProfile() {
	if n == nil {
		return
	}
	if p := n.prof; p != nil {
		p.mu.Lock()
		p.m = map[profKey]*profVal{}
		p.start = time.Now()
		p.mu.Unlock()
	}
}
