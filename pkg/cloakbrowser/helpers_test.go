package cloakbrowser

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

const fakeChrome = "#!/bin/sh\necho fake-cloakbrowser \"$@\"\n"

// entry is one member of a generated test archive.
type entry struct {
	name string
	typ  byte // tar type; 0 means regular file
	body string
	link string
	mode int64
}

func reg(name, body string, mode int64) entry { return entry{name: name, body: body, mode: mode} }
func dir(name string) entry                   { return entry{name: name, typ: tar.TypeDir, mode: 0o755} }
func symlink(name, target string) entry {
	return entry{name: name, typ: tar.TypeSymlink, link: target, mode: 0o777}
}

// goodEntries is a well-formed release: one top directory (flattened on
// install), the fake chrome, a data file and an internal symlink.
func goodEntries() []entry {
	return []entry{
		dir("cloakbrowser-linux-x64/"),
		reg("cloakbrowser-linux-x64/chrome", fakeChrome, 0o755),
		dir("cloakbrowser-linux-x64/locales/"),
		reg("cloakbrowser-linux-x64/locales/en-US.pak", "pak", 0o644),
		symlink("cloakbrowser-linux-x64/lang", "locales"),
	}
}

func makeTarGz(t testing.TB, entries []entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		typ := e.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		h := &tar.Header{Name: e.name, Typeflag: typ, Mode: e.mode, Linkname: e.link, Format: tar.FormatPAX}
		if typ == tar.TypeReg {
			h.Size = int64(len(e.body))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatalf("tar header %q: %v", e.name, err)
		}
		if typ == tar.TypeReg {
			if _, err := tw.Write([]byte(e.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func makeZip(t testing.TB, entries []entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		h.SetMode(os.FileMode(e.mode))
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func sign(priv ed25519.PrivateKey, manifest []byte) []byte {
	return []byte(base64.StdEncoding.EncodeToString(ed25519.Sign(priv, manifest)) + "\n")
}

// release returns the files of a correctly signed release, keyed by URL path
// under the download base.
func release(priv ed25519.PrivateKey, version, platform string, archive []byte) map[string][]byte {
	d := "/chromium-v" + version + "/"
	manifest := []byte("version=" + version + "\n" + sha256Hex(archive) + "  " + ArchiveName(platform) + "\n" +
		strings.Repeat("0", 64) + "  cloakbrowser-other.tar.gz\n")
	return map[string][]byte{
		d + ArchiveName(platform): archive,
		d + "SHA256SUMS":          manifest,
		d + "SHA256SUMS.sig":      sign(priv, manifest),
	}
}

// fileServer serves a fixed set of paths and counts requests.
type fileServer struct {
	mu       sync.Mutex
	files    map[string][]byte
	requests atomic.Int64
}

func (s *fileServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	s.mu.Lock()
	b, ok := s.files[r.URL.Path]
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Write(b)
}

func newFileServer(t *testing.T, files map[string][]byte) (*fileServer, *httptest.Server) {
	fs := &fileServer{files: files}
	srv := httptest.NewServer(fs)
	t.Cleanup(srv.Close)
	return fs, srv
}

// handlerTransport answers requests in memory, so tests of the default
// (cloakbrowser.dev / GitHub) URLs never touch the network.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	resp := rec.Result()
	resp.Request = r
	return resp, nil
}

func envMap(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func newKey(t testing.TB) (ed25519.PublicKey, ed25519.PrivateKey) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	return pub, priv
}

// baseOptions isolate a test: own cache, no environment, no system
// candidates, a fixed platform.
func baseOptions(cache string) Options {
	return Options{
		CacheDir:         cache,
		Platform:         PlatformLinuxX64,
		SystemCandidates: []string{},
		Getenv:           envMap(nil),
	}
}

// listDir returns the sorted names in dir (nil if it does not exist).
func listDir(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

// fakeInstall puts an executable chrome at cache/chromium-<v>/chrome.
func fakeInstall(t testing.TB, cache, version string) string {
	t.Helper()
	p := filepath.Join(cache, "chromium-"+version, "chrome")
	writeExe(t, p)
	return p
}

func writeExe(t testing.TB, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(fakeChrome), 0o755); err != nil {
		t.Fatal(err)
	}
}

func contains(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
