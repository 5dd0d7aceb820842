package session_test

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"

	"github.com/rs/zerolog"

	"github.com/cloakmcp/cloakbrowser-mcp/pkg/cloakbrowser"
	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

func chromium(t testing.TB) string {
	t.Helper()
	for _, n := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	t.Fatal("no Chromium: apt-get install -y chromium")
	return ""
}

// newSession is a session that launches a browser of its own: for tests of
// the launch, the browser's processes and profile, or its loss.
func newSession(t *testing.T) *session.Session {
	t.Helper()
	return startSession(t, nil)
}

// newContextSession is a session whose generations are fresh contexts in
// the test binary's shared browser (mcptest.SharedBrowser): for tests of
// what a page does, where a launch of its own would only cost time.
func newContextSession(t *testing.T) *session.Session {
	t.Helper()
	return startSession(t, mcptest.SharedBrowser(t))
}

func startSession(t *testing.T, shared *session.SharedBrowser) *session.Session {
	t.Helper()
	return startSessionWith(t, shared, nil)
}

// startSessionWith is startSession with its log written to log as well
// (when not nil) and its config changed by each of opts.
func startSessionWith(t *testing.T, shared *session.SharedBrowser, log io.Writer, opts ...func(*session.Config)) *session.Session {
	t.Helper()
	if log == nil {
		log = io.Discard
	}
	bin := cloakbrowser.BinaryInfo{BinaryPath: chromium(t), Engine: cloakbrowser.EngineChromium, Source: cloakbrowser.SourceSystem}
	cfg := session.Config{
		ResolveBinary: func(context.Context) (cloakbrowser.BinaryInfo, error) { return bin, nil },
		Headless:      true,
		NoSandbox:     true,
		Log:           zerolog.New(io.MultiWriter(zerolog.NewTestWriter(t), log)).With().Timestamp().Logger(),
		Shared:        shared,
	}
	for _, o := range opts {
		o(&cfg)
	}
	s := session.New(t.Name(), mcptest.SharedDriver(t), cfg)
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

func TestCloseLeavesNoProcessOrProfile(t *testing.T) {
	s := newSession(t)
	g, err := s.Generation(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	profile := g.ProfileDir
	if len(g.BrowserPIDs()) == 0 {
		t.Fatal("no browser process found")
	}
	if _, err := os.Stat(profile); err != nil {
		t.Fatalf("profile missing while running: %v", err)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if pids := session.ProfilePIDs(profile); len(pids) > 0 {
		t.Fatalf("processes left: %v", pids)
	}
	if _, err := os.Stat(profile); !os.IsNotExist(err) {
		t.Fatalf("profile left behind: %v", err)
	}
	if err := s.Do(t.Context(), func(context.Context, *session.Generation) error { return nil }); !errors.Is(err, session.ErrClosed) {
		t.Fatalf("Do after Close: %v, want ErrClosed", err)
	}
}

// TestBrowserLossRestartsOnNextCall kills the browser and checks that the
// next calls share one relaunch, each runs exactly once, and the old
// generation's profile is gone.
func TestBrowserLossRestartsOnNextCall(t *testing.T) {
	s := newSession(t)
	g1, err := s.Generation(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, pid := range g1.BrowserPIDs() {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	select {
	case <-g1.LostCh():
	case <-time.After(10 * time.Second):
		t.Fatal("browser loss not detected")
	}
	// Nothing restarts in the background.
	if s.Current() != nil {
		t.Fatal("a generation is current right after loss")
	}
	var mu sync.Mutex
	seen := map[int]int{}
	var wg sync.WaitGroup
	for i := 0; i < 5; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.Do(t.Context(), func(_ context.Context, g *session.Generation) error {
				mu.Lock()
				seen[g.N]++
				mu.Unlock()
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if len(seen) != 1 || seen[2] != 5 {
		t.Fatalf("calls by generation: %v; want all 5 on generation 2", seen)
	}
	if _, err := os.Stat(g1.ProfileDir); !os.IsNotExist(err) {
		t.Fatalf("old profile not disposed: %v", err)
	}
}

func TestLaunchFailureIsClearAndRetryable(t *testing.T) {
	calls := 0
	cfg := session.Config{
		ResolveBinary: func(context.Context) (cloakbrowser.BinaryInfo, error) {
			calls++
			return cloakbrowser.BinaryInfo{BinaryPath: "/nonexistent/chrome", Engine: "chromium", Source: "flag"}, nil
		},
		Headless: true,
		Log:      zerolog.Nop(),
	}
	s := session.New("bad", mcptest.SharedDriver(t), cfg)
	defer s.Close(context.Background())
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	_, err := s.Generation(ctx)
	if err == nil {
		t.Fatal("launch of a missing binary succeeded")
	}
	if want := "/nonexistent/chrome"; !contains(err.Error(), want) {
		t.Fatalf("error %q does not name %s", err, want)
	}
	if _, err := s.Generation(ctx); err == nil || calls != 2 {
		t.Fatalf("second attempt: err=%v calls=%d; want a new attempt", err, calls)
	}
}

func contains(s, sub string) bool {
	return len(sub) == 0 || (len(s) >= len(sub) && (s[:len(sub)] == sub || contains(s[1:], sub)))
}
