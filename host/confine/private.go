package confine

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"
)

// privateCopy gives the process its own writable copy of a directory that
// an environment variable of the command names (Spec.Private), and removes
// it on Release.
type privateCopy struct {
	dir string
	// links are the directories of the source linked to from dir, not
	// copied (newPrivateCopy).
	links []string
}

// maxPrivate bounds the bytes copied for one private directory: a cache,
// not a data set.
const maxPrivate = 256 << 20

// privateName is parselbox-private-<host pid>-<random>, as newPrivateCopy
// names its directories: sweepPrivate recognises those of hosts that are
// gone. oldPrivateName is the name without the pid of earlier versions.
var (
	privateName    = regexp.MustCompile(`^parselbox-private-([0-9]+)-[0-9]+$`)
	oldPrivateName = regexp.MustCompile(`^parselbox-private-[0-9]+$`)
)

// oldPrivateAge is how long a private directory named without its host's
// pid must have been left unchanged before sweepPrivate takes it as left
// behind.
const oldPrivateAge = 24 * time.Hour

// sweepPrivate removes from dir the private copies that hosts which died
// (killed, crashed) left behind: those whose host's pid is not alive, and
// those named without a pid, by earlier versions, unchanged for
// oldPrivateAge. A pid that is alive keeps its directories, even when it
// has been reused by another process since: the directories stay until
// that process ends too. Only directories (not symbolic links) with the
// mode newPrivateCopy makes, and owned by this host's user (by any user
// when it is root, which gives them to the sandbox's user), are removed.
func sweepPrivate(dir string, now time.Time) {
	entries, _ := os.ReadDir(dir)
	euid := uint32(os.Geteuid())
	for _, e := range entries {
		name := e.Name()
		m := privateName.FindStringSubmatch(name)
		if m == nil && !oldPrivateName.MatchString(name) {
			continue
		}
		if m != nil && !hostGone(m[1]) {
			continue
		}
		p := filepath.Join(dir, name)
		fi, err := os.Lstat(p)
		if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			continue
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok || (euid != 0 && st.Uid != euid) {
			continue
		}
		if m == nil && now.Sub(fi.ModTime()) < oldPrivateAge {
			continue
		}
		os.RemoveAll(p)
	}
}

// newPrivateCopy copies src into a new directory owned by uid (-1: the
// host's user), under the system's temporary directory so that the user
// can reach it whatever the modes above src. The directories are made as
// the walk finds them, the files copied by copyWorkers at once: creating a
// file is most of the copy's cost where it means a journal entry (ext4:
// 0.1 to 0.5 ms each), and it is on the path of every confined boot. The
// directories of src named in linked (paths relative to it) are not copied
// but linked to, for the caller to make read-only.
func newPrivateCopy(src string, linked []string, uid, gid int) (*privateCopy, error) {
	dst, err := os.MkdirTemp("", fmt.Sprintf("parselbox-private-%d-", hostPID))
	if err != nil {
		return nil, err
	}
	pc := &privateCopy{dir: dst}
	own := func(target string) error {
		if uid >= 0 {
			return os.Lchown(target, uid, gid)
		}
		return nil
	}
	var total atomic.Int64
	copies, ctx := errgroup.WithContext(context.Background()) // ctx ends when a copy fails
	copies.SetLimit(copyWorkers)
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if ctx.Err() != nil {
			return fs.SkipAll
		}
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
		case d.IsDir() && slices.Contains(linked, rel):
			abs, err := filepath.Abs(p)
			if err == nil {
				err = os.Symlink(abs, target)
			}
			pc.links = append(pc.links, abs)
			return cmp.Or(err, fs.SkipDir)
		case d.IsDir():
			if err := os.Mkdir(target, 0o700); err != nil {
				return err
			}
		case d.Type().IsRegular() && !strings.HasSuffix(p, "-shm"): // SQLite rebuilds its shared-memory index
			copies.Go(func() error {
				n, err := copyFile(p, target)
				if err == nil {
					err = own(target)
				}
				if total.Add(n) > maxPrivate {
					err = fmt.Errorf("more than %d MB", maxPrivate>>20)
				}
				return err
			})
			return nil
		default:
			return nil
		}
		return own(target)
	})
	if cerr := copies.Wait(); err == nil {
		err = cerr
	}
	if err != nil {
		pc.remove()
		return nil, fmt.Errorf("copying %s: %w", src, err)
	}
	return pc, nil
}

// copyWorkers are the files newPrivateCopy copies at once: on 2 cores, 4
// copy a 93-file Deno cache in 10.5 ms where 1 takes 15.7 ms (8: 10.1).
const copyWorkers = 4

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
	var n int64
	if strings.HasSuffix(src, "-wal") {
		n, err = copyWAL(out, in)
	} else {
		n, err = io.Copy(out, in)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return n, err
}

// copyWAL copies what SQLite reads of a write-ahead log: its header and
// the frames after it that carry its salt. After a checkpoint the log is
// written again from its start, under a new salt, and its file keeps the
// frames of earlier rounds past the new ones: Deno's V8 code cache, never
// checkpointed on exit (its processes are killed), keeps a 4 MB log of
// which 200 to 650 of 1000 frames were current in the bench's caches.
// SQLite stops reading at the first frame of another salt; the copy stops
// at one too, found by bisection (the current frames come first): a read
// of a frame's header each costs more than its copy. What is not such a
// log is copied whole.
func copyWAL(out, in *os.File) (int64, error) {
	var h [walHeader]byte
	if _, err := in.ReadAt(h[:], 0); err != nil || binary.BigEndian.Uint32(h[:])&^1 != walMagic {
		return io.Copy(out, in)
	}
	pageSize := int64(binary.BigEndian.Uint32(h[8:]))
	if pageSize < 512 || pageSize > 65536 || pageSize&(pageSize-1) != 0 {
		return io.Copy(out, in)
	}
	fi, err := in.Stat()
	if err != nil {
		return 0, err
	}
	frame := walFrameHeader + pageSize
	// Where the frames are not in order (a frame of another salt among the
	// current ones), the bisection finds an end at or past the first such
	// frame, where SQLite stops: it never leaves out a frame SQLite reads.
	var f [walFrameHeader]byte
	n := sort.Search(int((fi.Size()-walHeader)/frame), func(i int) bool { // a frame cut short is not one
		_, err := in.ReadAt(f[:], walHeader+int64(i)*frame)
		return err != nil || [8]byte(f[8:16]) != [8]byte(h[16:24])
	})
	return io.Copy(out, io.LimitReader(in, walHeader+int64(n)*frame)) // copy_file_range
}

// The write-ahead log's format (sqlite.org/fileformat2.html#walformat): a
// header of 32 bytes (magic, version, page size, checkpoint sequence, salt
// 1 and 2, checksum), then frames of a 24-byte header (page number, size
// after a commit, salt 1 and 2, checksum) and a page.
const (
	walMagic       = 0x377f0682 // and 0x377f0683: the checksums' byte order
	walHeader      = 32
	walFrameHeader = 24
)

func (pc *privateCopy) remove() error {
	if pc == nil || pc.dir == "" {
		return nil
	}
	err := os.RemoveAll(pc.dir)
	pc.dir = ""
	return err
}
