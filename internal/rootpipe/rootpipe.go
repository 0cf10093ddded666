// Package rootpipe hands an HCCL root info to a rank process over a pipe
// only that process inherits, as docs/hcclsim-threat-model.md's launch
// pattern says: the root info admits a process to the world, so it must
// not travel in the environment or the arguments, which every process of
// the same user reads in /proc/PID/environ and /proc/PID/cmdline.
package rootpipe

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"

	"github.com/ascend-go/cann/hccl"
)

// FD is the descriptor the rank reads the root info from:
// exec.Cmd.ExtraFiles[0].
const FD = 3

// Start starts cmd with root readable on its descriptor FD: a pipe written
// whole (a root info fits a pipe's buffer) and closed on the launcher's
// side before cmd runs. cmd must have no ExtraFiles of its own.
func Start(cmd *exec.Cmd, root *hccl.RootInfo) error {
	if len(cmd.ExtraFiles) > 0 {
		return errors.New("rootpipe: the command already has extra files; the root info takes descriptor 3")
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close() // the child holds its own copy once started
	_, err = w.Write(root[:])
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("rootpipe: hand the root info to a rank: %w", err)
	}
	cmd.ExtraFiles = []*os.File{r}
	return cmd.Start()
}

// Read reads the root info the launcher wrote on descriptor FD (Start)
// and closes the descriptor.
func Read() (hccl.RootInfo, error) {
	var root hccl.RootInfo
	f := os.NewFile(FD, "root info")
	if f == nil {
		return root, fmt.Errorf("rootpipe: no descriptor %d", FD)
	}
	defer f.Close()
	n, err := io.ReadFull(f, root[:])
	if err != nil {
		return root, fmt.Errorf("rootpipe: root info on descriptor %d: %d bytes: %w", FD, n, err)
	}
	return root, nil
}
