package cloakbrowser

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolveBinaryPath(t *testing.T) {
	tmp := t.TempDir()
	plain := filepath.Join(tmp, "my-chrome")
	writeExe(t, plain)
	layout := filepath.Join(tmp, "chromium-146.0.7680.177.5", "chrome")
	writeExe(t, layout)
	macLayout := filepath.Join(tmp, "chromium-145.0.7632.109.2", "Chromium.app", "Contents", "MacOS", "Chromium")
	writeExe(t, macLayout)

	cases := []struct {
		name        string
		path        string
		source      string
		env         map[string]string
		version     string
		wantErr     error
		wantErrText string
		wantSource  string
		wantEngine  string
		wantVersion string
	}{
		{name: "missing file", path: filepath.Join(tmp, "nope"), wantErr: ErrNotFound},
		{name: "directory", path: tmp, wantErrText: "not a regular file"},
		{name: "plain file from flag", path: plain, source: SourceFlag, wantSource: SourceFlag, wantEngine: EngineChromium},
		{name: "plain file, source defaults to flag", path: plain, wantSource: SourceFlag, wantEngine: EngineChromium},
		{name: "plain file from env", env: map[string]string{EnvBinaryPath: plain}, wantSource: SourceEnv, wantEngine: EngineChromium},
		{name: "missing file from env", env: map[string]string{EnvBinaryPath: filepath.Join(tmp, "nope")}, wantErr: ErrNotFound, wantErrText: "from env"},
		{name: "cache layout", path: layout, wantSource: SourceFlag, wantEngine: EngineCloak, wantVersion: "146.0.7680.177.5"},
		{name: "mac cache layout", path: macLayout, wantSource: SourceFlag, wantEngine: EngineCloak, wantVersion: "145.0.7632.109.2"},
		{name: "declared version option", path: plain, version: "147.0.1.2.3", wantSource: SourceFlag, wantEngine: EngineCloak, wantVersion: "147.0.1.2.3"},
		{name: "declared version env", path: plain, env: map[string]string{EnvVersion: "147.0.1.2"}, wantSource: SourceFlag, wantEngine: EngineCloak, wantVersion: "147.0.1.2"},
		{name: "flag wins over env", path: plain, env: map[string]string{EnvBinaryPath: filepath.Join(tmp, "nope")}, wantSource: SourceFlag, wantEngine: EngineChromium},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := baseOptions(filepath.Join(tmp, "cache"))
			o.BinaryPath, o.BinaryPathSource, o.Version = tc.path, tc.source, tc.version
			o.Getenv = envMap(tc.env)
			o.AllowDownload = true
			o.DownloadURL = "http://127.0.0.1:1" // must never be used
			info, err := Resolve(context.Background(), o)
			if tc.wantErr != nil || tc.wantErrText != "" {
				if err == nil {
					t.Fatalf("no error; info %+v", info)
				}
				if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
					t.Errorf("err %v is not %v", err, tc.wantErr)
				}
				if !strings.Contains(err.Error(), tc.wantErrText) {
					t.Errorf("err %v lacks %q", err, tc.wantErrText)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if info.Source != tc.wantSource || info.Engine != tc.wantEngine || info.Version != tc.wantVersion ||
				info.Stealth != (tc.wantEngine == EngineCloak) || !info.Installed || info.FallbackReason != "" {
				t.Errorf("info = %+v", info)
			}
		})
	}
}

func TestResolveVersionValidation(t *testing.T) {
	cases := []struct {
		name    string
		version string
		env     map[string]string
		wantErr []string // substrings; nil means success
	}{
		{name: "too short", version: "146.0", wantErr: []string{`"146.0"`}},
		{name: "word", version: "latest", wantErr: []string{`"latest"`}},
		{name: "six parts", version: "1.2.3.4.5.6", wantErr: []string{"1.2.3.4.5.6"}},
		{name: "trailing dot", version: "1.2.3.4.", wantErr: []string{"1.2.3.4."}},
		{name: "leading v", version: "v1.2.3.4", wantErr: []string{"v1.2.3.4"}},
		{name: "bad env", env: map[string]string{EnvVersion: "abc"}, wantErr: []string{EnvVersion, `"abc"`}},
		{name: "four parts", version: "146.0.7680.177"},
		{name: "five parts", version: "146.0.7680.177.5"},
		{name: "option wins over bad env", version: "146.0.7680.177.5", env: map[string]string{EnvVersion: "abc"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cache := t.TempDir()
			o := baseOptions(cache)
			o.Version = tc.version
			o.Getenv = envMap(tc.env)
			want := tc.version
			if tc.wantErr == nil {
				fakeInstall(t, cache, want)
			}
			info, err := Resolve(context.Background(), o)
			if tc.wantErr == nil {
				if err != nil || info.Version != want || info.Source != SourceCache {
					t.Fatalf("info %+v, err %v", info, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted; info %+v", info)
			}
			for _, s := range tc.wantErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("err %q lacks %q", err, s)
				}
			}
		})
	}
}

func TestResolveOptionErrors(t *testing.T) {
	cases := []struct {
		name string
		set  func(*Options)
		want string
	}{
		{name: "unsupported platform", set: func(o *Options) { o.Platform = "win32-arm64" }, want: "win32-arm64"},
		{name: "download URL with query", set: func(o *Options) { o.DownloadURL = "https://m.example/?token=abc" }, want: EnvDownloadURL},
		{name: "download URL not http", set: func(o *Options) { o.DownloadURL = "file:///srv/mirror" }, want: "http"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := baseOptions(t.TempDir())
			tc.set(&o)
			_, err := Resolve(context.Background(), o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want mention of %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "token=abc") {
				t.Errorf("error leaks the query: %v", err)
			}
		})
	}
}

func TestResolveMarker(t *testing.T) {
	const newer = "147.0.7700.1.1"
	cases := []struct {
		name        string
		marker      string
		install     []string
		version     string
		wantVersion string
		wantTried   string
	}{
		{name: "newer and installed is used", marker: newer, install: []string{PinnedVersion, newer}, wantVersion: newer},
		{name: "newer but not installed is ignored", marker: newer + "\n", install: []string{PinnedVersion}, wantVersion: PinnedVersion, wantTried: "not installed"},
		{name: "older than the pin is ignored", marker: "140.0.1.1", install: []string{PinnedVersion, "140.0.1.1"}, wantVersion: PinnedVersion},
		{name: "garbage is ignored", marker: "../../etc", install: []string{PinnedVersion}, wantVersion: PinnedVersion, wantTried: "not a version"},
		{name: "explicit version beats marker", marker: newer, install: []string{PinnedVersion, newer}, version: PinnedVersion, wantVersion: PinnedVersion},
		{name: "no marker", install: []string{PinnedVersion}, wantVersion: PinnedVersion},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cache := t.TempDir()
			for _, v := range tc.install {
				fakeInstall(t, cache, v)
			}
			if tc.marker != "" {
				if err := os.WriteFile(filepath.Join(cache, "latest_version_linux-x64"), []byte(tc.marker), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			o := baseOptions(cache)
			o.Version = tc.version
			info, err := Resolve(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if info.Version != tc.wantVersion || info.Source != SourceCache ||
				info.BinaryPath != filepath.Join(cache, "chromium-"+tc.wantVersion, "chrome") {
				t.Errorf("info = %+v", info)
			}
			if tc.wantTried != "" && !contains(info.Tried, tc.wantTried) {
				t.Errorf("tried %q lacks %q", info.Tried, tc.wantTried)
			}
		})
	}
}

func TestResolveCacheNotExecutable(t *testing.T) {
	cache := t.TempDir()
	p := filepath.Join(cache, "chromium-"+PinnedVersion, "chrome")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Resolve(context.Background(), baseOptions(cache))
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "not an executable") {
		t.Errorf("err = %v", err)
	}
}

func TestDefaultCacheDir(t *testing.T) {
	o := baseOptions("")
	env := t.TempDir()
	o.Getenv = envMap(map[string]string{EnvCacheDir: env})
	fakeInstall(t, env, PinnedVersion)
	info, err := Resolve(context.Background(), o)
	if err != nil || info.CacheRoot != env {
		t.Errorf("info %+v, err %v", info, err)
	}
}

// TestResolveNotFoundKeepsTheDownloadError: when the download fails and no
// system Chromium is left to fall back to, the error is ErrNotFound and
// still says why the download failed (errors.Is sees both).
func TestResolveNotFoundKeepsTheDownloadError(t *testing.T) {
	_, srv := newFileServer(t, map[string][]byte{}) // every file 404s
	o := baseOptions(t.TempDir())
	o.AllowDownload = true
	o.DownloadURL = srv.URL
	_, err := Resolve(context.Background(), o)
	if !errors.Is(err, ErrNotFound) || !errors.Is(err, ErrManifestUnavailable) {
		t.Fatalf("err = %v; want ErrNotFound wrapping ErrManifestUnavailable", err)
	}
}
