package session_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

// newRegistry makes a registry whose sessions are never launched.
func newRegistry(max int) *session.Registry {
	return session.NewRegistry(session.RegistryOptions{
		Max:       max,
		Isolation: "browser",
		New: func(h string) *session.Session {
			return session.New(h, nil /* never launched: no driver */, session.Config{Log: zerolog.Nop()})
		},
	})
}

func TestRegistryCapAndPrincipals(t *testing.T) {
	r := newRegistry(2)
	res1, err := r.Reserve()
	if err != nil {
		t.Fatal(err)
	}
	res2, err := r.Reserve()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Reserve(); !errors.Is(err, session.ErrFull) {
		t.Fatalf("third reserve: %v, want ErrFull", err)
	}
	if st := r.Stats(); st != (session.Stats{Active: 0, Pending: 2, Max: 2, Available: 0}) {
		t.Fatalf("stats %+v", st)
	}
	sa, err := res1.Activate("key-a", "token-1")
	if err != nil {
		t.Fatal(err)
	}
	res1.Release() // no effect after Activate
	res2.Release() // gives the slot back
	if st := r.Stats(); st != (session.Stats{Active: 1, Pending: 0, Max: 2, Available: 1}) {
		t.Fatalf("stats %+v", st)
	}

	cases := []struct {
		name, key, principal string
		want                 error
	}{
		{"owner", "key-a", "token-1", nil},
		{"other principal", "key-a", "token-2", session.ErrPrincipal},
		{"unknown key", "key-x", "token-1", session.ErrNotFound},
		{"empty key", "", "token-1", session.ErrNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := r.Lookup(tc.key, tc.principal)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Lookup: %v, want %v", err, tc.want)
			}
			if err == nil && s != sa {
				t.Fatal("Lookup returned another session")
			}
		})
	}

	if sa.ID() == "key-a" {
		t.Fatal("the session's handle is its key: keys must not be logged")
	}

	if err := r.Close("key-a"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Lookup("key-a", "token-1"); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("after Close: %v", err)
	}
	if err := sa.Do(context.Background(), func(context.Context, *session.Generation) error { return nil }); !errors.Is(err, session.ErrClosed) {
		t.Fatalf("closed session admitted a call: %v", err)
	}
	if err := r.Close("key-a"); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestRegistryShutdown(t *testing.T) {
	r := newRegistry(8)
	var sessions []*session.Session
	for _, k := range []string{"a", "b", "c"} {
		res, err := r.Reserve()
		if err != nil {
			t.Fatal(err)
		}
		s, err := res.Activate(k, "anonymous")
		if err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, s)
	}
	pending, err := r.Reserve()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Reserve(); !errors.Is(err, session.ErrClosed) {
		t.Fatalf("Reserve after Shutdown: %v", err)
	}
	if _, err := pending.Activate("d", "anonymous"); !errors.Is(err, session.ErrClosed) {
		t.Fatalf("Activate after Shutdown: %v", err)
	}
	if st := r.Stats(); st.Active != 0 || st.Pending != 0 || st.Available != 0 {
		t.Fatalf("stats after Shutdown: %+v", st)
	}
	for _, s := range sessions {
		if _, err := s.Generation(context.Background()); !errors.Is(err, session.ErrClosed) {
			t.Fatalf("session %s not closed: %v", s.ID(), err)
		}
	}
}

// TestRegistryConcurrentReserve never admits more than Max.
func TestRegistryConcurrentReserve(t *testing.T) {
	r := newRegistry(5)
	var mu sync.Mutex
	ok := 0
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			res, err := r.Reserve()
			if err != nil {
				return
			}
			if _, err := res.Activate(string(rune('a'+i)), "p"); err == nil {
				mu.Lock()
				ok++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if ok != 5 || r.Stats().Active != 5 {
		t.Fatalf("admitted %d (stats %+v), want 5", ok, r.Stats())
	}
	_ = r.Shutdown(context.Background())
}
