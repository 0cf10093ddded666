package hcclsim

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// Keying of rank-table worlds. A rank table's content is guessable (IP
// addresses, device and rank ids), so nothing derived from it alone may
// admit a process to a world. The ranks of one job share a job key: 32
// random bytes in the file "key" of a private job directory (mode 0700,
// owned by the job's user, the key file 0600). The directory is the one
// EnvJobDir names (a launcher creates it fresh per job, as
// examples/cluster does), else ".<table file>.hcclsim" beside the rank
// table, created by the first rank that needs it. The key is created
// atomically: written to a private temporary file and hard-linked to its
// name, so exactly one creator wins and every rank reads the same 32
// bytes. A process that cannot read the key file cannot derive anything
// below; one that did not read the rank table does not have its digest.

// EnvJobDir names the private directory holding a job's key and the
// sealed rendezvous of its rank-table worlds. It carries a path, never a
// secret: what the directory holds is protected by its mode and owner.
const EnvJobDir = "HCCLSIM_JOB_DIR"

const jobKeyBytes = 32

// jobDir returns the job directory for the rank table at abs: EnvJobDir
// when set (it must exist), else the sidecar directory beside the table,
// created when missing. Either must be a directory of this user that no
// one else can enter.
func jobDir(abs string) (string, error) {
	dir := os.Getenv(EnvJobDir)
	if dir == "" {
		dir = filepath.Join(filepath.Dir(abs), "."+filepath.Base(abs)+".hcclsim")
		if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("create the job directory beside the rank table: %v (set %s to a private directory)", err, EnvJobDir)
		}
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return "", fmt.Errorf("job directory: %v", err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("job directory %s is not a directory", dir)
	}
	if err := private(st, dir); err != nil {
		return "", err
	}
	return dir, nil
}

// private checks that st (of name) belongs to this user and grants
// nothing to group or others.
func private(st os.FileInfo, name string) error {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok || int(sys.Uid) != os.Geteuid() {
		return fmt.Errorf("%s is not owned by this user", name)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s has mode %v: group or others can use it", name, st.Mode().Perm())
	}
	return nil
}

// jobKey returns the key in dir, creating it when absent.
func jobKey(dir string) ([]byte, error) {
	name := filepath.Join(dir, "key")
	if _, err := os.Lstat(name); errors.Is(err, os.ErrNotExist) {
		if err := createKey(dir, name); err != nil {
			return nil, err
		}
	}
	return readPrivate(name, jobKeyBytes, jobKeyBytes)
}

// createKey writes a fresh key under a temporary name and links it to
// name; losing the race to another rank is fine (its key is used).
func createKey(dir, name string) error {
	var key [jobKeyBytes]byte
	if _, err := rand.Read(key[:]); err != nil {
		return err
	}
	tmp, err := writePrivateTemp(dir, "key", key[:])
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, name); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("job key: %v", err)
	}
	return nil
}

// writePrivateTemp writes data to a new 0600 file in dir and returns its
// name.
func writePrivateTemp(dir, prefix string, data []byte) (string, error) {
	var r [8]byte
	_, _ = rand.Read(r[:])
	tmp := filepath.Join(dir, fmt.Sprintf(".%s.%x.tmp", prefix, r))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return "", err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

// readPrivate reads a regular 0600-or-stricter file of this user, not a
// symbolic link, of lo..hi bytes.
func readPrivate(name string, lo, hi int) ([]byte, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", name)
	}
	if err := private(st, name); err != nil {
		return nil, err
	}
	if st.Size() < int64(lo) || st.Size() > int64(hi) {
		return nil, fmt.Errorf("%s has %d bytes, want %d..%d", name, st.Size(), lo, hi)
	}
	b := make([]byte, st.Size())
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, err
	}
	return b, nil
}

// derive is HMAC-SHA256 under the job key of a purpose label and the
// table's digest, plus optional extra bytes.
func derive(key []byte, label string, digest [32]byte, extra ...[]byte) []byte {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(label))
	mac.Write(digest[:])
	for _, e := range extra {
		mac.Write(e)
	}
	return mac.Sum(nil)
}
