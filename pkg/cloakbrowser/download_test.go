package cloakbrowser

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestDownloadThenCache(t *testing.T) {
	pub, priv := newKey(t)
	files := release(priv, PinnedVersion, PlatformLinuxX64, makeTarGz(t, goodEntries()))
	fsrv, srv := newFileServer(t, files)
	cache := filepath.Join(t.TempDir(), "cache")

	o := baseOptions(cache)
	o.DownloadURL = srv.URL + "/"
	o.AllowDownload = true
	o.PublicKeys = []ed25519.PublicKey{pub}

	info, err := Resolve(context.Background(), o)
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	wantBin := filepath.Join(cache, "chromium-"+PinnedVersion, "chrome")
	if info.Source != SourceDownload || info.BinaryPath != wantBin || info.Engine != EngineCloak || !info.Stealth ||
		!info.Installed || info.Version != PinnedVersion || info.FallbackReason != "" {
		t.Fatalf("info = %+v", info)
	}
	if want := srv.URL + "/chromium-v" + PinnedVersion + "/cloakbrowser-linux-x64.tar.gz"; info.DownloadURL != want {
		t.Errorf("DownloadURL = %q, want %q", info.DownloadURL, want)
	}
	if info.CacheDir != filepath.Join(cache, "chromium-"+PinnedVersion) {
		t.Errorf("CacheDir = %q", info.CacheDir)
	}
	if got := fsrv.requests.Load(); got != 3 {
		t.Errorf("requests = %d, want 3 (SHA256SUMS, .sig, archive)", got)
	}
	// Flattened, with the internal symlink and data file in place.
	if _, err := os.Stat(filepath.Join(cache, "chromium-"+PinnedVersion, "lang", "en-US.pak")); err != nil {
		t.Errorf("internal symlink/data missing: %v", err)
	}
	if got := listDir(t, cache); len(got) != 1 || got[0] != "chromium-"+PinnedVersion {
		t.Errorf("cache holds %v, want only the install (no temp files)", got)
	}
	if runtime.GOOS != "windows" {
		out, err := exec.Command(info.BinaryPath, "--version").Output()
		if err != nil || !strings.Contains(string(out), "fake-cloakbrowser --version") {
			t.Errorf("run installed chrome: %q, %v", out, err)
		}
	}

	// Second resolve: straight from the cache, no HTTP.
	info2, err := Resolve(context.Background(), o)
	if err != nil {
		t.Fatalf("second Resolve: %v", err)
	}
	if info2.Source != SourceCache || info2.BinaryPath != wantBin {
		t.Errorf("second info = %+v", info2)
	}
	if got := fsrv.requests.Load(); got != 3 {
		t.Errorf("second Resolve made %d HTTP requests", got-3)
	}

	// The JSON carries the bridge's binary fields and ours.
	b, err := json.Marshal(info2)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"version", "bundledVersion", "tier", "platform", "binaryPath", "installed", "cacheDir",
		"downloadUrl", "source", "engine", "stealth", "tried", "fallbackReason"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %q: %s", k, b)
		}
	}
	if m["tier"] != "free" || m["tried"] == nil {
		t.Errorf("tier/tried wrong: %s", b)
	}
}

// TestInstallRefuses checks that every verification or archive failure is
// refused with its sentinel and leaves nothing behind.
func TestInstallRefuses(t *testing.T) {
	pub, priv := newKey(t)
	_, otherPriv := newKey(t)
	v := PinnedVersion
	d := "/chromium-v" + v + "/"
	archiveName := ArchiveName(PlatformLinuxX64)

	withArchive := func(entries []entry) func(map[string][]byte) {
		return func(f map[string][]byte) {
			for k, val := range release(priv, v, PlatformLinuxX64, makeTarGz(t, entries)) {
				f[k] = val
			}
		}
	}
	resign := func(f map[string][]byte, manifest string) {
		f[d+"SHA256SUMS"] = []byte(manifest)
		f[d+"SHA256SUMS.sig"] = sign(priv, []byte(manifest))
	}

	cases := []struct {
		name   string
		mutate func(map[string][]byte)
		want   error  // sentinel, or nil for a plain error
		msg    string // substring of the error
	}{
		{name: "signature by another key", want: ErrBadSignature, mutate: func(f map[string][]byte) {
			f[d+"SHA256SUMS.sig"] = sign(otherPriv, f[d+"SHA256SUMS"])
		}},
		{name: "manifest changed after signing", want: ErrBadSignature, mutate: func(f map[string][]byte) {
			f[d+"SHA256SUMS"] = append(f[d+"SHA256SUMS"], "# extra\n"...)
		}},
		{name: "signature not strict base64 (inner newline)", want: ErrBadSignature, msg: "strict base64", mutate: func(f map[string][]byte) {
			s := strings.TrimSpace(string(f[d+"SHA256SUMS.sig"]))
			f[d+"SHA256SUMS.sig"] = []byte(s[:20] + "\n" + s[20:])
		}},
		{name: "signature not base64 at all", want: ErrBadSignature, mutate: func(f map[string][]byte) {
			f[d+"SHA256SUMS.sig"] = []byte("not a signature!")
		}},
		{name: "signature missing padding", want: ErrBadSignature, mutate: func(f map[string][]byte) {
			f[d+"SHA256SUMS.sig"] = []byte(strings.TrimRight(strings.TrimSpace(string(f[d+"SHA256SUMS.sig"])), "="))
		}},
		{name: "signature wrong length", want: ErrBadSignature, msg: "64", mutate: func(f map[string][]byte) {
			f[d+"SHA256SUMS.sig"] = []byte(base64.StdEncoding.EncodeToString(make([]byte, 32)))
		}},
		{name: "tampered archive", want: ErrChecksumMismatch, mutate: func(f map[string][]byte) {
			f[d+archiveName] = makeTarGz(t, append(goodEntries(), reg("cloakbrowser-linux-x64/extra", "x", 0o644)))
		}},
		{name: "no entry for the archive", want: ErrChecksumMismatch, msg: "no entry", mutate: func(f map[string][]byte) {
			resign(f, "version="+v+"\n"+sha256Hex(f[d+archiveName])+"  cloakbrowser-linux-arm64.tar.gz\n")
		}},
		{name: "wrong version line (downgrade)", want: ErrVersionMismatch, msg: "145.0.7632.109.2", mutate: func(f map[string][]byte) {
			resign(f, "version=145.0.7632.109.2\n"+sha256Hex(f[d+archiveName])+"  "+archiveName+"\n")
		}},
		{name: "no version line", want: ErrVersionMismatch, msg: "declares none", mutate: func(f map[string][]byte) {
			resign(f, sha256Hex(f[d+archiveName])+"  "+archiveName+"\n")
		}},
		{name: "version line with a suffix", want: ErrVersionMismatch, mutate: func(f map[string][]byte) {
			resign(f, "version="+v+".1\n"+sha256Hex(f[d+archiveName])+"  "+archiveName+"\n")
		}},
		{name: "SHA256SUMS 404", want: ErrManifestUnavailable, msg: "404", mutate: func(f map[string][]byte) {
			delete(f, d+"SHA256SUMS")
		}},
		{name: "SHA256SUMS.sig 404", want: ErrManifestUnavailable, mutate: func(f map[string][]byte) {
			delete(f, d+"SHA256SUMS.sig")
		}},
		{name: "archive 404", msg: "404", mutate: func(f map[string][]byte) {
			delete(f, d+archiveName)
		}},
		{name: "path traversal ../evil", want: ErrUnsafeArchive, msg: "..", mutate: withArchive([]entry{
			reg("chrome", fakeChrome, 0o755), reg("../evil", "x", 0o644),
		})},
		{name: "path traversal inside a dir", want: ErrUnsafeArchive, mutate: withArchive([]entry{
			reg("top/chrome", fakeChrome, 0o755), reg("top/../../../evil", "x", 0o644),
		})},
		{name: "absolute path", want: ErrUnsafeArchive, msg: "absolute", mutate: withArchive([]entry{
			reg("chrome", fakeChrome, 0o755), reg("/tmp/cloakbrowser-evil", "x", 0o644),
		})},
		{name: "symlink escaping", want: ErrUnsafeArchive, msg: "outside", mutate: withArchive([]entry{
			reg("top/chrome", fakeChrome, 0o755), symlink("top/evil", "../../outside"),
		})},
		{name: "symlink to absolute path", want: ErrUnsafeArchive, mutate: withArchive([]entry{
			reg("chrome", fakeChrome, 0o755), symlink("passwd", "/etc/passwd"),
		})},
		{name: "symlink chain escaping", want: ErrUnsafeArchive, msg: "outside", mutate: withArchive([]entry{
			reg("chrome", fakeChrome, 0o755), symlink("y", "."), symlink("x", "y/.."),
		})},
		{name: "write through a symlink", want: ErrUnsafeArchive, msg: "through a symlink", mutate: withArchive([]entry{
			dir("sub/"), symlink("d", "sub"), reg("d/chrome", fakeChrome, 0o755),
		})},
		{name: "dangling symlink", want: ErrUnsafeArchive, msg: "dangling", mutate: withArchive([]entry{
			reg("chrome", fakeChrome, 0o755), symlink("gone", "missing"),
		})},
		{name: "hard link escaping", want: ErrUnsafeArchive, mutate: withArchive([]entry{
			reg("chrome", fakeChrome, 0o755), {name: "evil", typ: '1', link: "../outside"},
		})},
		{name: "hard link replacing the binary", want: ErrUnsafeArchive, msg: "duplicate", mutate: withArchive([]entry{
			reg("data", "x", 0o644), reg("chrome", fakeChrome, 0o755), {name: "chrome", typ: '1', link: "data"},
		})},
		{name: "device file", want: ErrUnsafeArchive, msg: "unsupported", mutate: withArchive([]entry{
			reg("chrome", fakeChrome, 0o755), {name: "null", typ: '3'},
		})},
		{name: "no chrome in archive", msg: "no regular file chrome", mutate: withArchive([]entry{
			reg("top/chromium", fakeChrome, 0o755),
		})},
		{name: "not a gzip", msg: "gzip", mutate: func(f map[string][]byte) {
			f[d+archiveName] = []byte("plain text")
			resign(f, "version="+v+"\n"+sha256Hex(f[d+archiveName])+"  "+archiveName+"\n")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			files := release(priv, v, PlatformLinuxX64, makeTarGz(t, goodEntries()))
			tc.mutate(files)
			_, srv := newFileServer(t, files)
			root := t.TempDir()
			cache := filepath.Join(root, "cache")
			o := baseOptions(cache)
			o.DownloadURL = srv.URL
			o.PublicKeys = []ed25519.PublicKey{pub}

			info, err := Install(context.Background(), o)
			if err == nil {
				t.Fatalf("Install succeeded: %+v", info)
			}
			t.Logf("refused: %v", err)
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("error %q is not %v", err, tc.want)
			}
			if tc.msg != "" && !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q lacks %q", err, tc.msg)
			}
			if got := listDir(t, cache); len(got) != 0 {
				t.Errorf("cache left with %v", got)
			}
			if got := listDir(t, root); len(got) > 1 || (len(got) == 1 && got[0] != "cache") {
				t.Errorf("written outside the cache: %v", got)
			}
		})
	}
}

// TestResolveTamperingDoesNotFallBack: a verification failure is surfaced,
// not papered over with a system Chromium; a plain fetch failure falls back.
func TestResolveTamperingDoesNotFallBack(t *testing.T) {
	pub, priv := newKey(t)
	_, other := newKey(t)
	sys := filepath.Join(t.TempDir(), "chromium")
	writeExe(t, sys)
	d := "/chromium-v" + PinnedVersion + "/"

	cases := []struct {
		name       string
		mutate     func(map[string][]byte)
		wantErr    error
		wantSource string
	}{
		{name: "bad signature is an error", wantErr: ErrBadSignature, mutate: func(f map[string][]byte) {
			f[d+"SHA256SUMS.sig"] = sign(other, f[d+"SHA256SUMS"])
		}},
		{name: "missing manifest falls back", wantSource: SourceSystem, mutate: func(f map[string][]byte) {
			delete(f, d+"SHA256SUMS")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			files := release(priv, PinnedVersion, PlatformLinuxX64, makeTarGz(t, goodEntries()))
			tc.mutate(files)
			_, srv := newFileServer(t, files)
			o := baseOptions(t.TempDir())
			o.DownloadURL, o.AllowDownload = srv.URL, true
			o.PublicKeys = []ed25519.PublicKey{pub}
			o.SystemCandidates = []string{sys}
			info, err := Resolve(context.Background(), o)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v (info %+v)", err, tc.wantErr, info)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if info.Source != tc.wantSource || info.Engine != EngineChromium || info.Stealth {
				t.Errorf("info = %+v", info)
			}
			if !strings.Contains(info.FallbackReason, "download failed") || !contains(info.Tried, "download:") {
				t.Errorf("fallback not explained: %+v", info)
			}
		})
	}
}

// TestOfficialOrigins drives the default URLs through an in-memory
// transport: the primary is down, GitHub serves the release; and the skip
// flag is ignored without a custom URL.
func TestOfficialOrigins(t *testing.T) {
	pub, priv := newKey(t)
	rel := release(priv, PinnedVersion, PlatformLinuxX64, makeTarGz(t, goodEntries()))
	const ghPrefix = "/CloakHQ/cloakbrowser/releases/download"

	cases := []struct {
		name         string
		serve        func(host, path string) ([]byte, int)
		skipChecksum bool
		wantErr      error
		wantURL      string
	}{
		{
			name: "primary down, GitHub fallback",
			serve: func(host, path string) ([]byte, int) {
				if host == "github.com" {
					if b, ok := rel[strings.TrimPrefix(path, ghPrefix)]; ok {
						return b, 200
					}
				}
				return nil, http.StatusServiceUnavailable
			},
			wantURL: GitHubReleasesBase + "/chromium-v" + PinnedVersion + "/cloakbrowser-linux-x64.tar.gz",
		},
		{
			name: "primary serves everything",
			serve: func(host, path string) ([]byte, int) {
				if b, ok := rel[path]; ok && host == "cloakbrowser.dev" {
					return b, 200
				}
				return nil, 404
			},
			wantURL: DefaultDownloadBase + "/chromium-v" + PinnedVersion + "/cloakbrowser-linux-x64.tar.gz",
		},
		{
			name:         "skip flag ignored without a custom URL",
			skipChecksum: true,
			serve: func(host, path string) ([]byte, int) {
				if strings.HasSuffix(path, ".tar.gz") {
					return rel["/chromium-v"+PinnedVersion+"/"+ArchiveName(PlatformLinuxX64)], 200
				}
				return nil, 404
			},
			wantErr: ErrManifestUnavailable,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var hosts []string
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				hosts = append(hosts, r.URL.Host)
				mu.Unlock()
				b, code := tc.serve(r.URL.Host, r.URL.Path)
				w.WriteHeader(code)
				w.Write(b)
			})
			o := baseOptions(t.TempDir())
			o.PublicKeys = []ed25519.PublicKey{pub}
			o.HTTPClient = &http.Client{Transport: handlerTransport{h}}
			o.SkipChecksum = tc.skipChecksum
			info, err := Install(context.Background(), o)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Install: %v (hosts %v)", err, hosts)
			}
			if info.DownloadURL != tc.wantURL || info.Source != SourceDownload {
				t.Errorf("info = %+v, want URL %s", info, tc.wantURL)
			}
			for _, h := range hosts {
				if h != "cloakbrowser.dev" && h != "github.com" {
					t.Errorf("unexpected host %q", h)
				}
			}
		})
	}
}

func TestCustomURLSkipChecksum(t *testing.T) {
	archive := makeTarGz(t, goodEntries())
	files := map[string][]byte{"/chromium-v" + PinnedVersion + "/" + ArchiveName(PlatformLinuxX64): archive}
	_, srv := newFileServer(t, files)
	var logs []string
	o := baseOptions(t.TempDir())
	o.DownloadURL, o.SkipChecksum = srv.URL, true
	o.Logf = func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) }
	info, err := Install(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if info.Source != SourceDownload || !contains(logs, "verification skipped") {
		t.Errorf("info %+v, logs %q", info, logs)
	}
}

// TestCredentialsNotLeaked: a mirror URL with user:password never shows its
// password in logs, errors or BinaryInfo.
func TestCredentialsNotLeaked(t *testing.T) {
	pub, priv := newKey(t)
	for _, tc := range []struct {
		name    string
		files   map[string][]byte
		wantErr bool
	}{
		{name: "success", files: release(priv, PinnedVersion, PlatformLinuxX64, makeTarGz(t, goodEntries()))},
		{name: "not found", files: map[string][]byte{}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, srv := newFileServer(t, tc.files)
			var logs []string
			o := baseOptions(t.TempDir())
			o.DownloadURL = strings.Replace(srv.URL, "http://", "http://mirror-user:s3cret-pw@", 1)
			o.PublicKeys = []ed25519.PublicKey{pub}
			o.Logf = func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) }
			info, err := Install(context.Background(), o)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v", err)
			}
			all := strings.Join(logs, "\n") + fmt.Sprint(err) + fmt.Sprintf("%+v", info)
			if strings.Contains(all, "s3cret-pw") || strings.Contains(all, "mirror-user") {
				t.Errorf("credentials leaked: %s", all)
			}
		})
	}
}

func TestConcurrentInstall(t *testing.T) {
	pub, priv := newKey(t)
	_, srv := newFileServer(t, release(priv, PinnedVersion, PlatformLinuxX64, makeTarGz(t, goodEntries())))
	cache := t.TempDir()
	o := baseOptions(cache)
	o.DownloadURL = srv.URL
	o.PublicKeys = []ed25519.PublicKey{pub}

	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = Install(context.Background(), o)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Install %d: %v", i, err)
		}
	}
	if got := listDir(t, cache); len(got) != 1 || got[0] != "chromium-"+PinnedVersion {
		t.Errorf("cache holds %v", got)
	}
	if !isExecutableFile(filepath.Join(cache, "chromium-"+PinnedVersion, "chrome")) {
		t.Error("chrome missing after concurrent installs")
	}
}

func TestLimits(t *testing.T) {
	pub, priv := newKey(t)
	big := strings.Repeat("A", 64<<10)
	archive := makeTarGz(t, []entry{reg("chrome", fakeChrome, 0o755), reg("big", big, 0o644)})
	_, srv := newFileServer(t, release(priv, PinnedVersion, PlatformLinuxX64, archive))

	cases := []struct {
		name  string
		set   func(*limits)
		want  error
		inMsg string
	}{
		{name: "archive too large", set: func(l *limits) { l.archive = 100 }, inMsg: "limit"},
		{name: "unpacked too large", set: func(l *limits) { l.extracted = 1 << 10 }, want: ErrUnsafeArchive},
		{name: "too many entries", set: func(l *limits) { l.entries = 1 }, want: ErrUnsafeArchive},
		{name: "manifest too large", set: func(l *limits) { l.manifest = 10 }, want: ErrManifestUnavailable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cache := t.TempDir()
			o := baseOptions(cache)
			o.DownloadURL = srv.URL
			o.PublicKeys = []ed25519.PublicKey{pub}
			r, err := newResolver(o)
			if err != nil {
				t.Fatal(err)
			}
			tc.set(&r.limits)
			_, err = r.download(context.Background())
			if err == nil {
				t.Fatal("download succeeded")
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("err %v is not %v", err, tc.want)
			}
			if tc.inMsg != "" && !strings.Contains(err.Error(), tc.inMsg) {
				t.Errorf("err %v lacks %q", err, tc.inMsg)
			}
			if got := listDir(t, cache); len(got) != 0 {
				t.Errorf("cache left with %v", got)
			}
		})
	}
}

func TestInstallCanceled(t *testing.T) {
	pub, priv := newKey(t)
	_, srv := newFileServer(t, release(priv, PinnedVersion, PlatformLinuxX64, makeTarGz(t, goodEntries())))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cache := t.TempDir()
	o := baseOptions(cache)
	o.DownloadURL, o.AllowDownload = srv.URL, true
	o.PublicKeys = []ed25519.PublicKey{pub}
	sys := filepath.Join(t.TempDir(), "chromium")
	writeExe(t, sys)
	o.SystemCandidates = []string{sys}
	if _, err := Resolve(ctx, o); !errors.Is(err, context.Canceled) {
		t.Errorf("Resolve with canceled ctx: %v, want context.Canceled (no fallback)", err)
	}
	if got := listDir(t, cache); len(got) != 0 {
		t.Errorf("cache left with %v", got)
	}
}

func TestWindowsZip(t *testing.T) {
	pub, priv := newKey(t)
	cases := []struct {
		name    string
		entries []entry
		want    error
	}{
		{name: "good", entries: []entry{
			reg("cloakbrowser-windows-x64/chrome.exe", "MZ", 0o644),
			reg("cloakbrowser-windows-x64/locales/en-US.pak", "pak", 0o644),
		}},
		{name: "traversal", entries: []entry{reg("chrome.exe", "MZ", 0o644), reg("../evil.exe", "MZ", 0o644)}, want: ErrUnsafeArchive},
		{name: "symlink", entries: []entry{reg("chrome.exe", "MZ", 0o644), {name: "link", body: "chrome.exe", mode: int64(os.ModeSymlink | 0o777)}}, want: ErrUnsafeArchive},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, srv := newFileServer(t, release(priv, PinnedVersion, PlatformWindowsX64, makeZip(t, tc.entries)))
			cache := t.TempDir()
			o := baseOptions(cache)
			o.Platform = PlatformWindowsX64
			o.DownloadURL = srv.URL
			o.PublicKeys = []ed25519.PublicKey{pub}
			info, err := Install(context.Background(), o)
			if tc.want != nil {
				if !errors.Is(err, tc.want) {
					t.Fatalf("err = %v, want %v", err, tc.want)
				}
				if got := listDir(t, cache); len(got) != 0 {
					t.Errorf("cache left with %v", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if info.BinaryPath != filepath.Join(cache, "chromium-"+PinnedVersion, "chrome.exe") ||
				!strings.HasSuffix(info.DownloadURL, "cloakbrowser-windows-x64.zip") {
				t.Errorf("info = %+v", info)
			}
		})
	}
}

func TestParseManifest(t *testing.T) {
	h1 := strings.Repeat("ab", 32)
	h2 := strings.Repeat("CD", 32)
	cases := []struct {
		name    string
		in      string
		version string
		sums    map[string]string
		wantErr bool
	}{
		{name: "typical", in: "version=1.2.3.4\n" + h1 + "  a.tar.gz\n" + h2 + " *b.zip\n",
			version: "1.2.3.4", sums: map[string]string{"a.tar.gz": h1, "b.zip": strings.ToLower(h2)}},
		{name: "CRLF and blank lines", in: "\r\nversion=1.2.3.4\r\n\r\n" + h1 + "  a.tar.gz\r\n",
			version: "1.2.3.4", sums: map[string]string{"a.tar.gz": h1}},
		{name: "junk ignored", in: "# comment\nhello world\n" + h1[:63] + "  short\n" + h1 + "x  bad\n",
			sums: map[string]string{}},
		{name: "no version", in: h1 + "  a\n", sums: map[string]string{"a": h1}},
		{name: "repeated equal version", in: "version=1.2.3.4\nversion=1.2.3.4\n", version: "1.2.3.4", sums: map[string]string{}},
		{name: "conflicting versions", in: "version=1.2.3.4\nversion=1.2.3.5\n", wantErr: true},
		{name: "conflicting digests", in: h1 + "  a\n" + strings.Repeat("0", 64) + "  a\n", wantErr: true},
		{name: "hash without name", in: h1 + "   \n", sums: map[string]string{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ParseManifest([]byte(tc.in))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v", err)
			}
			if tc.wantErr {
				return
			}
			if m.Version != tc.version || fmt.Sprint(m.Sums) != fmt.Sprint(tc.sums) {
				t.Errorf("got %q %v, want %q %v", m.Version, m.Sums, tc.version, tc.sums)
			}
		})
	}
}

func FuzzParseManifest(f *testing.F) {
	h := strings.Repeat("0f", 32)
	f.Add([]byte("version=146.0.7680.177.5\n" + h + "  cloakbrowser-linux-x64.tar.gz\n"))
	f.Add([]byte(h + " *x\r\nversion=\n"))
	f.Add([]byte("version=1\nversion=2\n"))
	f.Add([]byte{0xff, '\n', 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseManifest(data)
		if err != nil {
			return
		}
		for name, sum := range m.Sums {
			if name == "" || strings.ContainsAny(name, "\n") {
				t.Errorf("bad name %q", name)
			}
			if len(sum) != 64 || !isHex(sum) || strings.ToLower(sum) != sum {
				t.Errorf("bad digest %q", sum)
			}
		}
		if strings.ContainsAny(m.Version, "\n") || m.Version != strings.TrimSpace(m.Version) {
			t.Errorf("bad version %q", m.Version)
		}
		// Parsing is deterministic.
		m2, _ := ParseManifest(data)
		if fmt.Sprint(m) != fmt.Sprint(m2) {
			t.Error("nondeterministic parse")
		}
	})
}

func TestDownloadURLFor(t *testing.T) {
	cases := []struct{ name, base, version, platform, want string }{
		{"default base", "", "146.0.7680.177.5", PlatformLinuxX64, "https://cloakbrowser.dev/chromium-v146.0.7680.177.5/cloakbrowser-linux-x64.tar.gz"},
		{"mirror with slash", "http://m.example/cb/", "1.2.3.4", PlatformDarwinArm64, "http://m.example/cb/chromium-v1.2.3.4/cloakbrowser-darwin-arm64.tar.gz"},
		{"windows zip", "https://cloakbrowser.dev", "1.2.3.4", PlatformWindowsX64, "https://cloakbrowser.dev/chromium-v1.2.3.4/cloakbrowser-windows-x64.zip"},
		{"github", GitHubReleasesBase, "1.2.3.4.5", PlatformLinuxArm64, "https://github.com/CloakHQ/cloakbrowser/releases/download/chromium-v1.2.3.4.5/cloakbrowser-linux-arm64.tar.gz"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := DownloadURLFor(tc.base, tc.version, tc.platform); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestPinnedKeysDecode(t *testing.T) {
	if keys := pinnedKeys(); len(keys) != len(pinnedSigningKeys) {
		t.Fatalf("decoded %d of %d pinned keys", len(keys), len(pinnedSigningKeys))
	}
	// The exported accessor hands out a copy: changing it leaves the trust
	// root alone.
	k := PinnedSigningKeys()
	k[0] = "AAAA"
	_ = append(k, "BBBB")
	if !slices.Equal(PinnedSigningKeys(), pinnedSigningKeys) || pinnedSigningKeys[0] == "AAAA" {
		t.Fatal("PinnedSigningKeys() aliases the pinned keys")
	}
}

func TestStaleTempsRemoved(t *testing.T) {
	pub, priv := newKey(t)
	_, srv := newFileServer(t, release(priv, PinnedVersion, PlatformLinuxX64, makeTarGz(t, goodEntries())))
	cache := t.TempDir()
	old := time.Now().Add(-48 * time.Hour)
	for _, n := range []string{".download-1.tar.gz", ".chromium-1.2.3.4.partial-9", ".chromium-1.2.3.4.stale-9", ".download-fresh.tar.gz", "latest_version_linux-x64", ".other-old"} {
		p := filepath.Join(cache, n)
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if n != ".download-fresh.tar.gz" {
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	o := baseOptions(cache)
	o.DownloadURL = srv.URL
	o.PublicKeys = []ed25519.PublicKey{pub}
	if _, err := Install(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	want := []string{".download-fresh.tar.gz", ".other-old", "chromium-" + PinnedVersion, "latest_version_linux-x64"}
	if got := listDir(t, cache); !slices.Equal(got, want) {
		t.Errorf("cache holds %v, want %v", got, want)
	}
}
