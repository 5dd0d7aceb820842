package session_test

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"

	"github.com/rs/zerolog"

	"github.com/cloakmcp/cloakbrowser-mcp/pkg/cloakbrowser"
	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

// TestSharedBrowserContexts: sessions on one shared browser get separate
// contexts; losing the browser loses every session's generation, the next
// calls share one relaunch, and Close leaves no process or profile.
func TestSharedBrowserContexts(t *testing.T) {
	bin := cloakbrowser.BinaryInfo{BinaryPath: chromium(t), Engine: cloakbrowser.EngineChromium, Source: cloakbrowser.SourceSystem}
	cfg := session.Config{
		ResolveBinary: func(context.Context) (cloakbrowser.BinaryInfo, error) { return bin, nil },
		Headless:      true,
		NoSandbox:     true,
		Log:           zerolog.New(zerolog.NewTestWriter(t)).With().Timestamp().Logger(),
	}
	shared := session.NewSharedBrowser(mcptest.SharedDriver(t), cfg)
	t.Cleanup(func() { _ = shared.Close(context.Background()) })
	cfg.Shared = shared
	a, b := session.New("a", mcptest.SharedDriver(t), cfg), session.New("b", mcptest.SharedDriver(t), cfg)
	t.Cleanup(func() { _ = a.Close(context.Background()); _ = b.Close(context.Background()) })

	ga, err := a.Generation(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	gb, err := b.Generation(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if ga.ProfileDir != "" || gb.ProfileDir != "" {
		t.Fatalf("want contexts without profile dirs; got profiles %q %q", ga.ProfileDir, gb.ProfileDir)
	}
	profile := shared.ProfileDir()
	pids := shared.PIDs()
	if profile == "" || len(pids) == 0 {
		t.Fatalf("shared browser not found: profile %q pids %v", profile, pids)
	}

	// Closing one session closes its context only.
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if gb.Lost() || len(shared.PIDs()) == 0 {
		t.Fatal("closing one session hurt the other")
	}

	// Kill the shared browser: b's generation is lost, the next call
	// relaunches.
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	select {
	case <-gb.LostCh():
	case <-time.After(10 * time.Second):
		t.Fatal("loss of the shared browser not noticed")
	}
	gb2, err := b.Generation(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if gb2.N != 2 || shared.ProfileDir() == profile || len(shared.PIDs()) == 0 {
		t.Fatalf("no relaunch: generation %d, profile %q", gb2.N, shared.ProfileDir())
	}
	if _, err := os.Stat(profile); !os.IsNotExist(err) {
		t.Fatalf("the lost browser's profile is left: %v", err)
	}
	profile2 := shared.ProfileDir()
	_ = b.Close(context.Background())
	if err := shared.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if p := session.ProfilePIDs(profile2); len(p) != 0 {
		t.Fatalf("processes left after Close: %v", p)
	}
	if _, err := os.Stat(profile2); !os.IsNotExist(err) {
		t.Fatalf("profile left after Close: %v", err)
	}
	if _, err := shared.NewContext(t.Context(), cfg); err == nil {
		t.Fatal("NewContext after Close succeeded")
	}
}
