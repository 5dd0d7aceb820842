package session

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/cloakmcp/cloakbrowser-mcp/pkg/driver"
)

// WriteOwnerMarker marks dir, a temporary directory this process made, as
// its own, so that once this process is gone (a SIGKILL, the OOM killer)
// the next server's SweepStale removes dir and kills what still uses it.
func WriteOwnerMarker(dir string) error {
	if err := driver.MarkOwned(dir); err != nil {
		return fmt.Errorf("mark temp dir as ours: %w", err)
	}
	return nil
}

// sweepKillWait bounds how long SweepStale waits for the processes it
// killed in one directory to die.
const sweepKillWait = 5 * time.Second

// SweepStale removes from tmpDir what dead cloakbrowser-mcp processes left
// there: each directory named driver.TempPrefix* whose owner marker (see
// WriteOwnerMarker; the driver marks its private TMPDIR) names a process
// that is gone. It first kills the processes still using such a directory
// (a browser on its profile, a driver or browser with it as TMPDIR). It
// never touches a directory without a valid marker, one of another user, or
// one whose owner still runs. It returns the directories it removed; an
// error names those it could not.
//
// Owners are told apart through /proc: outside Linux it removes nothing.
func SweepStale(tmpDir string, log zerolog.Logger) (removed []string, err error) {
	entries, err := os.ReadDir(tmpDir)
	if err != nil {
		return nil, fmt.Errorf("sweep %s: %w", tmpDir, err)
	}
	var errs []error
	for _, e := range entries {
		// DirEntry types come from lstat: a symlink is never taken for a
		// directory here, nor followed below.
		if !e.IsDir() || !strings.HasPrefix(e.Name(), driver.TempPrefix) {
			continue
		}
		dir := filepath.Join(tmpDir, e.Name())
		owner, err := driver.ReadOwner(dir)
		if err != nil || owner.Alive() {
			continue
		}
		l := log.With().Str("dir", dir).Int("owner", owner.PID).Logger()
		if pids := driver.PIDsUsing(dir); len(pids) > 0 {
			l.Info().Ints("pids", pids).Msg("killing what a dead server left running")
		}
		if left := driver.KillUsing(dir, sweepKillWait); len(left) > 0 {
			errs = append(errs, fmt.Errorf("sweep %s: processes %v still use it", dir, left))
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, fmt.Errorf("sweep %s: %w", dir, err))
			continue
		}
		l.Debug().Msg("removed a dead server's temp dir")
		removed = append(removed, dir)
	}
	return removed, errors.Join(errs...)
}

// ownedTempDir makes a temporary directory of ours (named
// driver.TempPrefix+kind…) with the owner marker, so a crash cannot leave it
// behind for good: the next server's sweep removes it.
func ownedTempDir(kind string) (string, error) {
	dir, err := os.MkdirTemp("", driver.TempPrefix+kind)
	if err != nil {
		return "", fmt.Errorf("create a temp dir: %w", err)
	}
	if err := WriteOwnerMarker(dir); err != nil {
		_ = os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}
