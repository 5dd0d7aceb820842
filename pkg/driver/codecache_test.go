package driver

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"
)

// TestShimPreloadsTheCodeCache: the shim puts the prelaunch's, the code
// cache's and the lean heap's preloads on node's command line, in that
// order, quoted (a driver dir with a space and a quote in it); it leaves the
// code cache's off when CLOAKBROWSER_MCP_DRIVER_CODE_CACHE=off, and the lean
// heap's off for a driver started with LeanHeapFlag already or with a
// user's own node flags.
func TestShimPreloadsTheCodeCache(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "it's a dir")
	fakePackage(t, dir, PlaywrightVersion)
	// A node that prints the arguments it got, one a line.
	node := filepath.Join(t.TempDir(), "node")
	os.WriteFile(node, []byte("#!/bin/sh\nfor a in \"$@\"; do echo \"$a\"; done\n"), 0o755)
	t.Setenv(driverArgsEnv, "--max-lazy")
	// preloads runs the shim and returns the preloads node got, checking
	// the rest of its command line.
	preloads := func(o Options) []string {
		t.Helper()
		o.Dir, o.NodePath = dir, node
		p, err := versionShim(o)
		if err != nil || p == "" {
			t.Fatalf("shim: %q %v", p, err)
		}
		out, err := exec.Command(p, "cli.js", "run-driver").Output()
		if err != nil {
			t.Fatalf("shim: %v", err)
		}
		got := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(got) < 3 || got[0] != "--max-lazy" || len(got)%2 != 1 || got[len(got)-2] != "cli.js" || got[len(got)-1] != "run-driver" {
			t.Fatalf("node got %q, want --max-lazy, -r PRELOAD pairs, cli.js run-driver", got)
		}
		var files []string
		for i := 1; i < len(got)-2; i += 2 {
			if got[i] != "-r" {
				t.Fatalf("node got %q, want --max-lazy, -r PRELOAD pairs, cli.js run-driver", got)
			}
			b, err := os.ReadFile(got[i+1])
			if err != nil || filepath.Dir(got[i+1]) != dir {
				t.Fatalf("preload %s in %s: %v", got[i+1], dir, err)
			}
			files = append(files, string(b))
		}
		return files
	}
	check := func(name string, got []string, want ...string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("%s: node got %d preloads, not the %d expected (or not in their order)", name, len(got), len(want))
		}
	}
	check("defaults", preloads(Options{}), prelaunchJS, codeCacheJS, leanJS)
	check("lean from the start", preloads(Options{LeanHeap: true}), prelaunchJS, codeCacheJS)
	t.Run("own flags", func(t *testing.T) {
		t.Setenv(NodeFlagsEnv, "--max-lazy")
		check("own flags", preloads(Options{}), prelaunchJS, codeCacheJS)
	})
	t.Setenv(CodeCacheEnv, "off")
	check("code cache off", preloads(Options{}), prelaunchJS, leanJS)
}

// fakePackage gives the driver dir dir (made if missing) a package.json of
// playwright-core at version, all versionShim reads of it.
func fakePackage(t *testing.T, dir, version string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "package"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "package", "package.json"), []byte(`{"name":"playwright-core","version":"`+version+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ownDriverDir is a driver dir of the test's own, its package linked to the
// installed driver's: what a driver keeps beside itself (code cache,
// records) stays in the test.
func ownDriverDir(t *testing.T) string {
	t.Helper()
	inst := Options{}.Resolved()
	if _, err := os.Stat(inst.CLIPath()); err != nil {
		t.Fatalf("driver not installed (run `go run ./cmd/cloakbrowser-mcp install --driver-only`): %v", err)
	}
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(inst.Dir, "package"), filepath.Join(dir, "package")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestCodeCacheIsWrittenThenTaken: the real driver, in a driver dir of its
// own (its package linked to the installed one), writes a code cache of
// both bundles and their one-byte sources at its first run (before lean.js
// changes V8's flags in the same step), and its next
// run (with another version of the prelaunch's preload) takes them: V8
// accepts the cache, so nothing is written again. A temporary file a killed writer left (over
// a minute old) is removed, a newer one (maybe being written) is not; a
// cache no start took for 30 days is removed, and the ones taken are
// marked used.
func TestCodeCacheIsWrittenThenTaken(t *testing.T) {
	testtier.BrowserTier(t)
	t.Setenv("PLAYWRIGHT_NODEJS_PATH", nodeFromEnv)
	dir := ownDriverDir(t)
	cacheDir := filepath.Join(dir, "code-cache")
	if err := os.Mkdir(cacheDir, 0o755); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(cacheDir, "coreBundle-0-1-2.cache.999999.tmp")
	fresh := filepath.Join(cacheDir, "coreBundle-0-1-2.cache.999998.tmp")
	for _, f := range []string{stale, fresh} {
		if err := os.WriteFile(f, []byte("half"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	unused := filepath.Join(cacheDir, "coreBundle-000000000000-1-2.cache")
	if err := os.WriteFile(unused, []byte("other flags"), 0o644); err != nil {
		t.Fatal(err)
	}
	for f, age := range map[string]time.Duration{stale: 2 * time.Minute, unused: 31 * 24 * time.Hour} {
		if old := time.Now().Add(-age); os.Chtimes(f, old, old) != nil {
			t.Fatal("cannot age", f)
		}
	}
	run := func(hold time.Duration) {
		t.Helper()
		d := Start(Options{Dir: dir}, false)
		if _, err := d.Get(t.Context()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(hold)
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
	caches := func() map[string]time.Time {
		t.Helper()
		m := map[string]time.Time{}
		es, _ := os.ReadDir(cacheDir)
		for _, e := range es {
			if !strings.HasSuffix(e.Name(), ".cache") && !strings.HasSuffix(e.Name(), ".src") || e.Name() == filepath.Base(unused) {
				continue
			}
			fi, err := e.Info()
			if err != nil {
				t.Fatal(err)
			}
			m[e.Name()] = fi.ModTime()
		}
		return m
	}
	// The first run outlasts the 3 s step where the cache is written and,
	// after it, lean.js changes V8's flags: a cache written after that
	// change would be refused by the next start.
	run(3500 * time.Millisecond)
	var first map[string]time.Time
	testtier.EventuallyState(t, 30*time.Second, "the code cache of both bundles", func() (bool, string) {
		first = caches()
		n := 0
		for _, b := range []string{"coreBundle-", "utilsBundle-"} {
			for _, ext := range []string{".cache", ".src"} {
				for f := range first {
					if strings.HasPrefix(f, b) && strings.HasSuffix(f, ext) {
						n++
					}
				}
			}
		}
		return n == 4 && len(first) == 4, strings.Join(slices.Sorted(maps.Keys(first)), " ")
	})
	// The kept sources are the bundles with each character outside ASCII
	// as its \u escape.
	for f := range first {
		if !strings.HasSuffix(f, ".src") {
			continue
		}
		bundle, _, _ := strings.Cut(f, "-")
		orig, err := os.ReadFile(filepath.Join(dir, "package", "lib", bundle+".js"))
		if err != nil {
			t.Fatal(err)
		}
		var want strings.Builder
		for _, u := range utf16.Encode([]rune(string(orig))) {
			if u < 0x80 {
				want.WriteByte(byte(u))
			} else {
				fmt.Fprintf(&want, "\\u%04x", u)
			}
		}
		got, err := os.ReadFile(filepath.Join(cacheDir, f))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want.String() || len(got) == len(orig) {
			t.Errorf("%s is not %s.js with its %d non-ASCII bytes escaped", f, bundle, len(orig)-len(got))
		}
	}
	if _, err := os.Stat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the stale temporary file is still there (%v)", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("a recent temporary file was removed: %v", err)
	}
	if _, err := os.Stat(unused); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a cache unused for 31 days is still there (%v)", err)
	}
	// Both caches aged 29 days: the next run takes them, which marks them
	// used, and does not write them again (a write is a new file, renamed
	// over the old).
	aged := time.Now().Add(-29 * 24 * time.Hour)
	inodes := map[string]os.FileInfo{}
	for n := range first {
		fi, err := os.Stat(filepath.Join(cacheDir, n))
		if err != nil {
			t.Fatal(err)
		}
		inodes[n] = fi
		if err := os.Chtimes(filepath.Join(cacheDir, n), aged, aged); err != nil {
			t.Fatal(err)
		}
		first[n] = aged
	}
	// Another version of the prelaunch's preload (another file on node's
	// command line) takes the same caches.
	orig := prelaunchJS
	prelaunchJS += "\n// another version\n"
	t.Cleanup(func() { prelaunchJS = orig })
	run(0)
	second := caches()
	if len(second) != len(first) {
		t.Fatalf("the second run left %v, the first %v", slices.Sorted(maps.Keys(second)), slices.Sorted(maps.Keys(first)))
	}
	for n := range first {
		if at := second[n]; at.Before(time.Now().Add(-time.Hour)) {
			t.Errorf("%s taken but not marked used (mtime %v)", n, at)
		}
	}
	for n, fi := range inodes {
		now, err := os.Stat(filepath.Join(cacheDir, n))
		if err != nil || !os.SameFile(fi, now) {
			t.Errorf("%s was written again (%v): V8 refused the cache the first run made", n, err)
		}
	}
}

// TestShimKeepsAUsersMallocSetting: the shim gives node a fixed malloc mmap
// threshold unless the environment has one already, which node then gets
// as it was.
func TestShimKeepsAUsersMallocSetting(t *testing.T) {
	dir := t.TempDir()
	fakePackage(t, dir, PlaywrightVersion)
	node := filepath.Join(t.TempDir(), "node")
	os.WriteFile(node, []byte("#!/bin/sh\necho \"[${"+mallocMmapEnv+"-unset}]\"\n"), 0o755)
	shim, err := versionShim(Options{Dir: dir, NodePath: node})
	if err != nil || shim == "" {
		t.Fatalf("shim: %q %v", shim, err)
	}
	for _, tc := range []struct{ env, want string }{
		{"", "[131072]"},
		{mallocMmapEnv + "=65536", "[65536]"},
		{mallocMmapEnv + "=", "[]"},
	} {
		cmd := exec.Command(shim, "cli.js", "run-driver")
		cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
		if tc.env != "" {
			cmd.Env = append(cmd.Env, tc.env)
		}
		out, err := cmd.Output()
		if got := strings.TrimSpace(string(out)); err != nil || got != tc.want {
			t.Errorf("with %q node saw %s (%v), want %s", tc.env, got, err, tc.want)
		}
	}
}

// TestShimSweepsUnusedVersions: the shim and its preloads of other versions
// that no start used for 30 days are removed when a driver starts; newer
// ones, files of other names and the current ones stay, and a current one
// is marked used, however old it was.
func TestShimSweepsUnusedVersions(t *testing.T) {
	dir := t.TempDir()
	fakePackage(t, dir, PlaywrightVersion)
	node := filepath.Join(t.TempDir(), "node")
	os.WriteFile(node, []byte("#!/bin/sh\n"), 0o755)
	current, err := versionShim(Options{Dir: dir, NodePath: node})
	if err != nil || current == "" {
		t.Fatalf("shim: %q %v", current, err)
	}
	age := func(name string, d time.Duration) {
		t.Helper()
		f := filepath.Join(dir, name)
		if _, err := os.Stat(f); err != nil {
			if err := os.WriteFile(f, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		old := time.Now().Add(-d)
		if err := os.Chtimes(f, old, old); err != nil {
			t.Fatal(err)
		}
	}
	month := 31 * 24 * time.Hour
	gone := []string{"node-000000000000", "codecache-111111111111.js", "prelaunch-222222222222.js"}
	kept := []string{"node-333333333333", "node-notahashatall", "prelaunch-44444444444.js", "code-cache-555555555555.js"}
	for _, n := range gone {
		age(n, month)
	}
	age(kept[0], 10*24*time.Hour)
	for _, n := range kept[1:] {
		age(n, month)
	}
	age(filepath.Base(current), month)
	if again, err := versionShim(Options{Dir: dir, NodePath: node}); err != nil || again != current {
		t.Fatalf("shim again: %q %v, want %q", again, err, current)
	}
	for _, n := range gone {
		if _, err := os.Stat(filepath.Join(dir, n)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s unused for a month is still there (%v)", n, err)
		}
	}
	for _, n := range kept {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s was removed: %v", n, err)
		}
	}
	if fi, err := os.Stat(current); err != nil || time.Since(fi.ModTime()) > time.Hour {
		t.Errorf("the current shim was not kept and marked used: %v", err)
	}
}
