package driver

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// TempPrefix starts the name of every temporary directory a cloakbrowser-mcp
// process makes and marks (the driver's private TMPDIR, a session's profile).
const TempPrefix = "cloakbrowser-mcp-"

// OwnerFile is the file inside such a directory that names its owner.
const OwnerFile = ".cloakbrowser-mcp-owner"

// ErrNoOwner means a directory carries no valid owner marker of this user:
// it is not ours to remove.
var ErrNoOwner = errors.New("no cloakbrowser-mcp owner marker")

// Owner identifies the process that made a temporary directory. Start (clock
// ticks after boot, field 22 of /proc/<pid>/stat) and Boot (the kernel's
// boot_id) make a later process that reuses PID, in this boot or another,
// not pass for the owner. PIDNS names the PID namespace PID is in: a
// process in another one (a container sharing the temp dir) cannot judge
// the owner. Where the platform has none of them, they are zero.
type Owner struct {
	PID   int
	Start uint64
	Boot  string
	PIDNS string
}

// SelfOwner is this process as an Owner.
func SelfOwner() (Owner, error) { return selfOwner() }

// MarkOwned writes this process as dir's owner (see [Owner]), so that once
// this process is gone its reaper (see startReaper) removes dir, or failing
// that a later process's sweep does.
func MarkOwned(dir string) error {
	o, err := SelfOwner()
	if err != nil {
		return fmt.Errorf("mark %s: %w", dir, err)
	}
	if abs, err := filepath.Abs(dir); err == nil {
		reapIn(filepath.Dir(abs))
	}
	return WriteOwner(dir, o)
}

const ownerHeader = "cloakbrowser-mcp temp dir owner"

// WriteOwner writes o as dir's owner. It fails if dir already has one.
func WriteOwner(dir string, o Owner) error {
	f, err := os.OpenFile(filepath.Join(dir, OwnerFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("write owner of %s: %w", dir, err)
	}
	_, err = fmt.Fprintf(f, "%s\npid %d\nstart %d\nboot %s\npidns %s\n", ownerHeader, o.PID, o.Start, o.Boot, o.PIDNS)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write owner of %s: %w", dir, err)
	}
	return nil
}

// ReadOwner returns the owner written in dir. It fails with ErrNoOwner
// unless dir is a directory (not a symlink) of this user holding a complete
// marker that is a regular file of this user: a directory someone else made
// to look like ours is never taken for ours.
func ReadOwner(dir string) (Owner, error) {
	if err := ownedByMe(dir, true); err != nil {
		return Owner{}, err
	}
	marker := filepath.Join(dir, OwnerFile)
	if err := ownedByMe(marker, false); err != nil {
		return Owner{}, err
	}
	b, err := os.ReadFile(marker)
	if err != nil {
		return Owner{}, fmt.Errorf("%w in %s: %w", ErrNoOwner, dir, err)
	}
	o, ok := parseOwner(b)
	if !ok {
		return Owner{}, fmt.Errorf("%w in %s: unreadable marker", ErrNoOwner, dir)
	}
	return o, nil
}

// ownedByMe checks that path is a directory (wantDir) or a regular file,
// not a symlink, owned by this process's user.
func ownedByMe(path string, wantDir bool) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNoOwner, err)
	}
	if wantDir && !fi.IsDir() || !wantDir && !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: %s is a %s", ErrNoOwner, path, fi.Mode().Type())
	}
	if uid, ok := fileUID(fi); ok && uid != os.Getuid() {
		return fmt.Errorf("%w: %s belongs to uid %d", ErrNoOwner, path, uid)
	}
	return nil
}

func parseOwner(b []byte) (Owner, bool) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	if !sc.Scan() || sc.Text() != ownerHeader {
		return Owner{}, false
	}
	var o Owner
	seen := 0
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		var err error
		switch k {
		case "pid":
			o.PID, err = strconv.Atoi(v)
		case "start":
			o.Start, err = strconv.ParseUint(v, 10, 64)
		case "boot":
			o.Boot = v
		case "pidns":
			o.PIDNS = v
		default:
			continue
		}
		if err != nil {
			return Owner{}, false
		}
		seen++
	}
	// Every line: a marker cut short while being written is not one.
	return o, seen == 4 && o.PID > 0
}
