package session

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
)

func TestSafeFileName(t *testing.T) {
	cases := map[string]string{
		"report.pdf":                      "report.pdf",
		"../../etc/passwd":                "passwd",
		`..\..\boot.ini`:                  "boot.ini",
		"_.._data.bin":                    "data.bin",
		".bashrc":                         "bashrc",
		"...":                             "download",
		"":                                "download",
		"a b&c;d|e.txt":                   "a_b_c_d_e.txt",
		"résumé 2024.pdf":                 "résumé_2024.pdf",
		"nul\x00byte.bin":                 "nul_byte.bin",
		"/abs/path/x.tar.gz":              "x.tar.gz",
		strings.Repeat("a", 300):          strings.Repeat("a", 120),
		strings.Repeat("b", 300) + ".zip": strings.Repeat("b", 116) + ".zip",
	}
	for in, want := range cases {
		if got := SafeFileName(in); got != want {
			t.Errorf("SafeFileName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCopyIntoNeverOverwrites(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(t.TempDir(), "src")
	os.WriteFile(src, []byte("new"), 0o644)
	os.WriteFile(filepath.Join(dir, "f.txt"), []byte("old"), 0o644)
	// A planted symlink is not followed.
	target := filepath.Join(t.TempDir(), "victim")
	os.Symlink(target, filepath.Join(dir, "f-2.txt"))

	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	p, n, err := copyInto(root, dir, "f.txt", src, 3)
	if err != nil || n != 3 || filepath.Base(p) != "f-3.txt" {
		t.Fatalf("copyInto = %s, %d, %v", p, n, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "f.txt")); string(b) != "old" {
		t.Error("existing file overwritten")
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Error("symlink followed")
	}
}

func TestDownloadBudget(t *testing.T) {
	s := &Session{cfg: Config{MaxDownloadBytes: 100}}
	if err := s.reserveBytes(&Download{}, 60); err != nil {
		t.Fatal(err)
	}
	if err := s.reserveBytes(&Download{}, 50); err == nil || !strings.Contains(err.Error(), "100 bytes in all (60 used)") {
		t.Fatalf("over budget: %v", err)
	}
	s.releaseBytes(60)
	if err := s.reserveBytes(&Download{}, 100); err != nil {
		t.Fatal(err)
	}
	if (Config{}).maxDownloadBytes() != DefaultMaxDownloadBytes || (Config{}).maxDownloads() != DefaultMaxDownloads {
		t.Error("zero config must mean the defaults")
	}
}

// addDownload lists d as the browser's download event would.
func addDownload(s *Session, d *Download) {
	l := &s.downloads
	l.mu.Lock()
	l.list = append(l.list, d)
	l.notify()
	l.mu.Unlock()
}

// finishDownload marks d done as its saved file would.
func finishDownload(s *Session, d *Download) {
	l := &s.downloads
	l.mu.Lock()
	d.Done = true
	l.notify()
	l.mu.Unlock()
}

func TestWaitDownload(t *testing.T) {
	s := &Session{}
	add := func(d *Download) { addDownload(s, d) }
	finish := func(d *Download) { finishDownload(s, d) }

	t.Run("none starts", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		if _, err := s.WaitDownload(ctx, nil); !errors.Is(err, ErrNoDownload) || !strings.Contains(err.Error(), "started") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("done before the wait", func(t *testing.T) {
		add(&Download{ID: 1, Suggested: "a", Done: true, Path: "/out/a"})
		d, err := s.WaitDownload(t.Context(), nil)
		if err != nil || d.ID != 1 {
			t.Fatalf("%+v %v", d, err)
		}
	})
	t.Run("each download goes to one waiter", func(t *testing.T) {
		// Its own session: synctest's fake clock runs the loser's timeout
		// out at once, and Wait knows when both waiters are blocked.
		synctest.Test(t, func(t *testing.T) {
			s := &Session{}
			var got atomic.Int32
			done := make(chan struct{}, 2)
			for range 2 {
				go func() {
					ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
					defer cancel()
					if _, err := s.WaitDownload(ctx, nil); err == nil {
						got.Add(1)
					}
					done <- struct{}{}
				}()
			}
			synctest.Wait() // both wait for a download to start
			d := &Download{ID: 2, Suggested: "b"}
			addDownload(s, d)
			synctest.Wait() // one of them claimed it and waits for it to finish
			finishDownload(s, d)
			<-done
			<-done
			if got.Load() != 1 {
				t.Fatalf("%d waiters got the download", got.Load())
			}
		})
	})
	t.Run("still running at the deadline", func(t *testing.T) {
		d := &Download{ID: 3, Suggested: "slow.iso"}
		add(d)
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		if _, err := s.WaitDownload(ctx, nil); err == nil || !strings.Contains(err.Error(), "slow.iso is still downloading") {
			t.Fatalf("err %v", err)
		}
		// Given back: a later wait gets it.
		finish(d)
		if got, err := s.WaitDownload(t.Context(), nil); err != nil || got.ID != 3 {
			t.Fatalf("%+v %v", got, err)
		}
	})
}

func TestDisposers(t *testing.T) {
	s := &Session{}
	g := &Generation{s: s, lostCh: make(chan struct{})}
	var runs atomic.Int32
	g.OnDispose("a", func(context.Context) { runs.Add(100) })
	g.OnDispose("a", func(context.Context) { runs.Add(1) }) // replaces
	g.OnDispose("b", func(context.Context) { runs.Add(10) })
	g.OnDispose("c", func(context.Context) { runs.Add(1000) })
	g.OnDispose("c", nil) // removes
	g.runDisposers(t.Context())
	g.runDisposers(t.Context()) // once
	if runs.Load() != 11 {
		t.Fatalf("runs %d, want 11", runs.Load())
	}
	lost := &Generation{s: s, lostCh: make(chan struct{})}
	close(lost.lostCh)
	lost.OnDispose("a", func(context.Context) { t.Error("hook ran on a lost browser") })
	lost.runDisposers(t.Context())
}

// TestDownloadBudgetWhileStreaming: the bytes downloads in progress have
// received count with the bytes saved; the first report past the budget
// marks the download that made it cancelled, and a finished download's
// bytes in progress give way to its saved size.
func TestDownloadBudgetWhileStreaming(t *testing.T) {
	s := &Session{cfg: Config{MaxDownloadBytes: 100}}
	l := &s.downloads
	recA := &Download{rawURL: "http://x/a", Suggested: "a.bin"}
	l.list = append(l.list, recA)
	s.downloadEvent(nil, page.DownloadEvent{GUID: "a", URL: "http://x/a", Suggested: "a.bin", State: "begin"})
	s.downloadEvent(nil, page.DownloadEvent{GUID: "b", URL: "http://x/b", Suggested: "b.bin", State: "begin"})
	if recA.live == nil || recA.live != l.live["a"] {
		t.Fatal("the capture was not matched with its progress")
	}
	s.downloadEvent(nil, page.DownloadEvent{GUID: "a", Received: 60, State: "inProgress"})
	s.downloadEvent(nil, page.DownloadEvent{GUID: "b", Received: 30, State: "inProgress"})
	if l.live["a"].cancelled || l.live["b"].cancelled {
		t.Fatal("cancelled within the budget")
	}
	s.downloadEvent(nil, page.DownloadEvent{GUID: "b", Received: 50, State: "inProgress"})
	if !l.live["b"].cancelled || l.live["a"].cancelled {
		t.Fatalf("110 bytes of 100: a cancelled %v, b cancelled %v; want b only", l.live["a"].cancelled, l.live["b"].cancelled)
	}
	s.downloadEvent(nil, page.DownloadEvent{GUID: "b", State: "canceled"})
	if _, ok := l.live["b"]; ok || l.inFlight() != 60 {
		t.Fatalf("a cancelled download still counts: %d in flight", l.inFlight())
	}
	s.downloadEvent(nil, page.DownloadEvent{GUID: "a", Received: 70, State: "completed"})
	if err := s.reserveBytes(recA, 70); err != nil {
		t.Fatalf("a's own bytes in progress counted against its saved size: %v", err)
	}
	if l.inFlight() != 0 || l.bytes != 70 {
		t.Fatalf("after a was saved: %d in flight, %d saved", l.inFlight(), l.bytes)
	}
}
