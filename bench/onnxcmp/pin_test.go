package onnxcmp

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// pinOneCPU restricts every thread of this process (and so the children
// it starts after) to one CPU of those it may use, the last, and returns
// a note for the table and a function that restores each thread's mask.
// Where the mask cannot be read or set (not Linux, a restricted
// container) it leaves the threads alone and says so.
func pinOneCPU() (string, func()) {
	var old unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return fmt.Sprintf(" (not pinned: %v)", err), func() {}
	}
	cpu := -1
	for i := range 1024 {
		if old.IsSet(i) {
			cpu = i
		}
	}
	if cpu < 0 {
		return " (not pinned: empty CPU mask)", func() {}
	}
	var one unix.CPUSet
	one.Set(cpu)
	tids := threads()
	for _, tid := range tids {
		_ = unix.SchedSetaffinity(tid, &one) // a thread that exited meanwhile is no loss
	}
	return fmt.Sprintf(", both pinned to CPU %d", cpu), func() {
		for _, tid := range threads() {
			_ = unix.SchedSetaffinity(tid, &old)
		}
	}
}

// threads lists this process's thread ids (/proc/self/task).
func threads() []int {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return []int{0}
	}
	var ids []int
	for _, e := range ents {
		if id, err := strconv.Atoi(e.Name()); err == nil {
			ids = append(ids, id)
		}
	}
	return ids
}
