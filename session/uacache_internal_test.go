package session

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/pkg/cloakbrowser"
)

// TestUserAgentDiskCache: the headed user agent read from a binary is kept
// under the cache root for the next process, keyed by the binary's size and
// modification time (a binary replaced in place is read again); what is
// found there is used only if it is a user agent; no cache root, no file.
func TestUserAgentDiskCache(t *testing.T) {
	root := t.TempDir()
	binPath := filepath.Join(root, "chrome")
	if err := os.WriteFile(binPath, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	bin := cloakbrowser.BinaryInfo{BinaryPath: binPath, CacheRoot: root}
	key := uaKey(bin, "", []string{"--fingerprint=7"})
	file := uaCacheFile(bin, key)
	if file == "" || !strings.HasPrefix(file, filepath.Join(root, "user-agents")+string(filepath.Separator)) {
		t.Fatalf("uaCacheFile = %q, want a file under the cache root", file)
	}
	if _, ok := loadCachedUA(file); ok {
		t.Fatal("a user agent found before one was stored")
	}
	const ua = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/146.0.0.0 Safari/537.36"
	for _, want := range []string{ua, ""} {
		if err := storeCachedUA(file, want); err != nil {
			t.Fatal(err)
		}
		if got, ok := loadCachedUA(file); !ok || got != want {
			t.Fatalf("loadCachedUA = %q, %v; want %q", got, ok, want)
		}
	}
	if err := storeCachedUA(file, ua); err != nil {
		t.Fatal(err)
	}

	// The next process takes it from the disk: no launch (pw is nil, and a
	// launch would panic).
	userAgents.Delete(key)
	c := Config{}
	if got := c.probeUserAgent(context.Background(), nil, bin, []string{"--fingerprint=7", "--no-sandbox"}); got != ua {
		t.Fatalf("probeUserAgent with the disk cache = %q, want %q", got, ua)
	}
	userAgents.Delete(key)

	if other := uaCacheFile(bin, uaKey(bin, "", []string{"--fingerprint=8"})); other == file {
		t.Fatal("another fingerprint seed shares the file")
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(binPath, later, later); err != nil {
		t.Fatal(err)
	}
	if moved := uaCacheFile(bin, key); moved == file {
		t.Fatal("a binary replaced in place (new modification time) keeps its old user agent")
	}
	for name, junk := range map[string]string{
		"not JSON":      "Mozilla/5.0 x",
		"not a UA":      `{"userAgent":"<script>"}`,
		"control bytes": `{"userAgent":"Mozilla/5.0 a\nb"}`,
		"too long":      `{"userAgent":"Mozilla/5.0 ` + strings.Repeat("a", maxUALength) + `"}`,
	} {
		if err := os.WriteFile(file, []byte(junk), 0o600); err != nil {
			t.Fatal(err)
		}
		if got, ok := loadCachedUA(file); ok {
			t.Errorf("%s: loadCachedUA = %q, true; want nothing", name, got)
		}
	}
	if f := uaCacheFile(cloakbrowser.BinaryInfo{BinaryPath: binPath}, key); f != "" {
		t.Errorf("no cache root: uaCacheFile = %q, want \"\"", f)
	}
	if f := uaCacheFile(cloakbrowser.BinaryInfo{BinaryPath: filepath.Join(root, "gone"), CacheRoot: root}, key); f != "" {
		t.Errorf("no binary: uaCacheFile = %q, want \"\"", f)
	}
}
