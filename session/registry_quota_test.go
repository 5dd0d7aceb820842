package session_test

import (
	"errors"
	"testing"

	"github.com/rs/zerolog"

	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

// TestRegistryPerPrincipalQuota: ReserveFor counts a principal's sessions
// and reservations against MaxPerPrincipal; releasing or closing frees its
// slot; other principals and Reserve are not counted against it.
func TestRegistryPerPrincipalQuota(t *testing.T) {
	r := session.NewRegistry(session.RegistryOptions{
		Max: 5, MaxPerPrincipal: 2, Isolation: "browser",
		New: func(h string) *session.Session {
			return session.New(h, nil /* never launched: no driver */, session.Config{Log: zerolog.Nop()})
		},
	})
	a1, err := r.ReserveFor("t-a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a1.Activate("key-a1", "t-a"); err != nil {
		t.Fatal(err)
	}
	a2, err := r.ReserveFor("t-a") // pending counts too
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReserveFor("t-a"); !errors.Is(err, session.ErrPrincipalFull) {
		t.Fatalf("third for t-a: %v, want ErrPrincipalFull", err)
	}
	if n := r.PrincipalSessions("t-a"); n != 2 {
		t.Fatalf("t-a holds %d, want 2", n)
	}
	if _, err := r.ReserveFor("t-b"); err != nil {
		t.Fatalf("t-b: %v", err)
	}
	if _, err := r.Reserve(); err != nil {
		t.Fatalf("unattributed reserve: %v", err)
	}
	a2.Release()
	a3, err := r.ReserveFor("t-a")
	if err != nil {
		t.Fatalf("after a release: %v", err)
	}
	a3.Release()
	if err := r.Close("key-a1"); err != nil {
		t.Fatal(err)
	}
	if n := r.PrincipalSessions("t-a"); n != 0 {
		t.Fatalf("t-a holds %d after close, want 0", n)
	}
	// The global cap still comes first: 5 slots, 2 taken (t-b, Reserve).
	for range 3 {
		if _, err := r.ReserveFor("t-c" + string(rune('0'+r.Stats().Pending))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.ReserveFor("t-d"); !errors.Is(err, session.ErrFull) {
		t.Fatalf("past the global cap: %v, want ErrFull", err)
	}
}
