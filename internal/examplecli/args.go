package examplecli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// ErrUsage marks an error in the command line (exit status 2).
var ErrUsage = errors.New("usage")

// UsageError is a bad flag or argument; it matches ErrUsage.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string        { return e.Msg }
func (e *UsageError) Is(target error) bool { return target == ErrUsage }

// Usagef returns a *UsageError.
func Usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// Parse parses args with fs (which must use flag.ContinueOnError) and
// refuses positional arguments: a stray word is usually a flag whose
// dash was lost or a value after a boolean flag, and ignoring it would
// run something the user did not ask for. -h gives flag.ErrHelp.
func Parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &UsageError{Msg: err.Error()}
	}
	if fs.NArg() > 0 {
		return Usagef("unexpected argument %q: %s takes flags only (see -h)", fs.Arg(0), fs.Name())
	}
	return nil
}

// Exit is the end of an example's main: status 0 for -h, 2 with the
// message for a usage error, 1 with the message for any other error.
func Exit(prog string, err error, stderr io.Writer) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, ErrUsage):
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return 2
	}
	fmt.Fprintf(stderr, "%s: %v\n", prog, err)
	return 1
}

// CheckWritableFile checks, before any work, that path can be written by
// a later os.Create: an existing file is opened for writing (not
// truncated), a new one is created and removed again.
func CheckWritableFile(flagName, path string) error {
	if path == "" {
		return nil
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return Usagef("-%s %s: is a directory", flagName, path)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err == nil {
		return f.Close()
	}
	if !errors.Is(err, os.ErrNotExist) {
		return Usagef("-%s %s: cannot be written: %v", flagName, path, unwrapPath(err))
	}
	f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return Usagef("-%s %s: cannot be written: %v", flagName, path, unwrapPath(err))
	}
	_ = f.Close()
	return os.Remove(path)
}

// CheckWritableDir creates dir if needed and checks a file can be created
// in it.
func CheckWritableDir(flagName, dir string) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Usagef("-%s %s: %v", flagName, dir, unwrapPath(err))
	}
	f, err := os.CreateTemp(dir, ".write-check-*")
	if err != nil {
		return Usagef("-%s %s: cannot write in it: %v", flagName, dir, unwrapPath(err))
	}
	name := f.Name()
	_ = f.Close()
	return os.Remove(name)
}

// CheckReadableFile checks that path names a regular file this process
// can open.
func CheckReadableFile(flagName, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return Usagef("-%s %s: %v", flagName, path, unwrapPath(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Usagef("-%s %s: %v", flagName, path, err)
	}
	if st.IsDir() {
		return Usagef("-%s %s: is a directory", flagName, filepath.Clean(path))
	}
	return nil
}

// unwrapPath drops the *os.PathError's repetition of the path.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// CheckRange refuses v outside [lo, hi], naming the flag.
func CheckRange(flagName string, v, lo, hi int64) error {
	if v < lo || v > hi {
		if hi == lo {
			return Usagef("-%s %d: must be %d", flagName, v, lo)
		}
		return Usagef("-%s %d: must be in [%d, %d]", flagName, v, lo, hi)
	}
	return nil
}
