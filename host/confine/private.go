package confine

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// privateCopy gives the process its own writable copy of a directory that
// an environment variable of the command names (Spec.Private), and removes
// it on Release.
type privateCopy struct {
	dir string
}

// maxPrivate bounds the bytes copied for one private directory: a cache,
// not a data set.
const maxPrivate = 256 << 20

// newPrivateCopy copies src into a new directory owned by uid (-1: the
// host's user), under the system's temporary directory so that the user
// can reach it whatever the modes above src.
func newPrivateCopy(src string, uid, gid int) (*privateCopy, error) {
	dst, err := os.MkdirTemp("", "parselbox-private-")
	if err != nil {
		return nil, err
	}
	pc := &privateCopy{dir: dst}
	var total int64
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == src {
				return err
			}
			return nil // unreadable: not copied
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		switch {
		case p == src:
		case d.IsDir():
			if err := os.Mkdir(target, 0o700); err != nil {
				return err
			}
		case d.Type().IsRegular() && !strings.HasSuffix(p, "-shm"): // SQLite rebuilds its shared-memory index
			n, err := copyFile(p, target)
			if total += n; total > maxPrivate {
				return fmt.Errorf("more than %d MB", maxPrivate>>20)
			}
			if err != nil {
				return err
			}
		default:
			return nil
		}
		if uid >= 0 {
			return os.Lchown(target, uid, gid)
		}
		return nil
	})
	if err != nil {
		pc.remove()
		return nil, fmt.Errorf("copying %s: %w", src, err)
	}
	return pc, nil
}

func copyFile(src, dst string) (int64, error) {
	in, err := os.Open(src)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return n, err
}

func (pc *privateCopy) remove() error {
	if pc == nil || pc.dir == "" {
		return nil
	}
	err := os.RemoveAll(pc.dir)
	pc.dir = ""
	return err
}
