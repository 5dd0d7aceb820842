package cloakbrowser

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// TestCheckDownload: CheckDownload says whether a download would work now,
// fetching only what a download fetches first (SHA256SUMS, or with
// SkipChecksum a HEAD of the archive), and names each origin's cause.
func TestCheckDownload(t *testing.T) {
	_, priv := newKey(t)
	files := release(priv, PinnedVersion, PlatformLinuxX64, []byte("archive"))
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		files map[string][]byte
		skip  bool
		want  string // "" means nil
	}{
		{"a mirror with the release", files, false, ""},
		{"a mirror without it", map[string][]byte{}, false, "SHA256SUMS: HTTP 404"},
		{"skip checksum: the archive answers", map[string][]byte{"/chromium-v" + PinnedVersion + "/" + ArchiveName(PlatformLinuxX64): []byte("a")}, true, ""},
		{"skip checksum: no archive", map[string][]byte{}, true, "HTTP 404"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs, srv := newFileServer(t, tc.files)
			o := baseOptions(t.TempDir())
			o.DownloadURL, o.SkipChecksum = srv.URL, tc.skip
			err := CheckDownload(ctx, o)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("CheckDownload: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("CheckDownload: %v, want an error with %q", err, tc.want)
			}
			if n := fs.requests.Load(); n != 1 {
				t.Errorf("%d requests, want 1 (a custom mirror has no GitHub fallback, and nothing is downloaded)", n)
			}
			if entries := listDir(t, o.CacheDir); len(entries) != 0 {
				t.Errorf("the cache got %v", entries)
			}
		})
	}
	t.Run("the default origins, both down", func(t *testing.T) {
		o := baseOptions(t.TempDir())
		o.HTTPClient = &http.Client{Transport: handlerTransport{http.NotFoundHandler()}}
		err := CheckDownload(ctx, o)
		if err == nil || !strings.Contains(err.Error(), "cloakbrowser.dev") || !strings.Contains(err.Error(), "github.com") {
			t.Fatalf("CheckDownload: %v, want each origin's cause", err)
		}
	})
}
