package driver

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// Video: Playwright records video through an ffmpeg it looks for only in
// its browser registry, <PLAYWRIGHT_BROWSERS_PATH>/ffmpeg-<revision>/
// ffmpeg-linux (the revision is the pinned playwright-core's browsers.json
// entry), and has no option to name another. The driver runs with its
// PLAYWRIGHT_BROWSERS_PATH inside its private TMPDIR, a directory this
// process owns, and links the ffmpeg the server found (Debian's, or
// --ffmpeg-path) there. The driver never uses the registry for browsers:
// every launch names its executable, and installs skip Playwright's
// browsers.

// ErrNoFFmpeg means no ffmpeg is there to record video with.
var ErrNoFFmpeg = errors.New("video needs ffmpeg: install it (apt-get install ffmpeg) or pass --ffmpeg-path")

// FindFFmpeg resolves the ffmpeg to record video with: path when set (it
// must be an executable file), else `ffmpeg` on PATH, else the one
// Playwright installs into its own registry (`npx playwright install
// ffmpeg`). It returns an absolute path, or an error wrapping ErrNoFFmpeg.
func FindFFmpeg(path string) (string, error) {
	if path != "" {
		p, err := exec.LookPath(path)
		if err != nil || !filepath.IsAbs(p) {
			if err == nil {
				err = errors.New("not an absolute path")
			}
			return "", fmt.Errorf("%w (--ffmpeg-path %s: %v)", ErrNoFFmpeg, path, err)
		}
		return filepath.Clean(p), nil
	}
	if p, err := exec.LookPath("ffmpeg"); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs, nil
		}
	}
	if base := playwrightRegistry(); base != "" {
		matches, _ := filepath.Glob(filepath.Join(base, "ffmpeg-*", ffmpegExecutable()))
		for _, m := range matches {
			if st, err := os.Stat(m); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
				return m, nil
			}
		}
	}
	return "", fmt.Errorf("%w (no ffmpeg on PATH)", ErrNoFFmpeg)
}

// playwrightRegistry is Playwright's own registry directory as a user's
// Playwright sees it ("" when unknown).
func playwrightRegistry() string {
	if p := os.Getenv("PLAYWRIGHT_BROWSERS_PATH"); p != "" && p != "0" && filepath.IsAbs(p) {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	switch runtime.GOOS {
	case "darwin":
		return filepath.Join(home, "Library", "Caches", "ms-playwright")
	case "linux":
		if x := os.Getenv("XDG_CACHE_HOME"); x != "" && filepath.IsAbs(x) {
			return filepath.Join(x, "ms-playwright")
		}
		return filepath.Join(home, ".cache", "ms-playwright")
	}
	return ""
}

// ffmpegExecutable is the file name Playwright's registry gives ffmpeg on
// this platform.
func ffmpegExecutable() string {
	switch runtime.GOOS {
	case "darwin":
		return "ffmpeg-mac"
	case "windows":
		return "ffmpeg-win64.exe"
	}
	return "ffmpeg-linux"
}

// FFmpegRevision reads the ffmpeg revision from a playwright-core
// browsers.json (the registry directory is ffmpeg-<revision>).
func FFmpegRevision(browsersJSON []byte) (string, error) {
	var f struct {
		Browsers []struct {
			Name     string `json:"name"`
			Revision string `json:"revision"`
		} `json:"browsers"`
	}
	if err := json.Unmarshal(browsersJSON, &f); err != nil {
		return "", fmt.Errorf("browsers.json: %w", err)
	}
	for _, b := range f.Browsers {
		if b.Name == "ffmpeg" && b.Revision != "" && !strings.ContainsAny(b.Revision, `/\.`) {
			return b.Revision, nil
		}
	}
	return "", errors.New("browsers.json has no ffmpeg entry")
}

// registryDir is the PLAYWRIGHT_BROWSERS_PATH the driver runs with: a
// directory inside its private TMPDIR ("" when it has none).
func (d *Driver) registryDir() string {
	if d.tmp == "" {
		return ""
	}
	return filepath.Join(d.tmp, "ms-playwright")
}

// SetFFmpeg makes path (an absolute path to an ffmpeg executable, see
// FindFFmpeg) the ffmpeg the driver records video with, linked where
// Playwright looks for it. It may be called before the driver starts (the
// link is made at each start, once the driver is installed) or while it
// runs (the link is replaced; recordings already running keep theirs).
// An empty path removes the link.
func (d *Driver) SetFFmpeg(path string) error {
	if d.registryDir() == "" {
		return fmt.Errorf("%w: the driver has no private directory to link ffmpeg into", ErrNoFFmpeg)
	}
	d.mu.Lock()
	d.ffmpeg = path
	d.mu.Unlock()
	if _, err := os.Stat(filepath.Join(filepath.Dir(d.opts.CLIPath()), "browsers.json")); err != nil {
		return nil // not installed yet: the start links it
	}
	return d.linkFFmpeg()
}

// FFmpeg returns the ffmpeg SetFFmpeg linked ("" for none).
func (d *Driver) FFmpeg() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.ffmpeg
}

// linkFFmpeg (re)makes the registry link to the ffmpeg of SetFFmpeg: a new
// symlink renamed over the old one, so Playwright never sees none.
func (d *Driver) linkFFmpeg() error {
	reg := d.registryDir()
	if reg == "" {
		return nil
	}
	d.mu.Lock()
	target := d.ffmpeg
	d.mu.Unlock()
	b, err := os.ReadFile(filepath.Join(filepath.Dir(d.opts.CLIPath()), "browsers.json"))
	if err != nil {
		return fmt.Errorf("link ffmpeg: %w", err)
	}
	rev, err := FFmpegRevision(b)
	if err != nil {
		return fmt.Errorf("link ffmpeg: %w", err)
	}
	dir := filepath.Join(reg, "ffmpeg-"+rev)
	link := filepath.Join(dir, ffmpegExecutable())
	if target == "" {
		if err := os.Remove(link); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("unlink ffmpeg: %w", err)
		}
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("link ffmpeg: %w", err)
	}
	tmp := link + ".new"
	_ = os.Remove(tmp)
	if err := os.Symlink(target, tmp); err != nil {
		return fmt.Errorf("link ffmpeg %s: %w", target, err)
	}
	if err := os.Rename(tmp, link); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("link ffmpeg %s: %w", target, err)
	}
	return nil
}
