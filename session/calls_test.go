package session

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestBeginCall: at most MaxConcurrentCalls calls are admitted at once; one
// more fails with ErrBusy; ending one admits the next.
func TestBeginCall(t *testing.T) {
	s := New("calls", nil, Config{MaxConcurrentCalls: 3})
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	var ends []func()
	for range 3 {
		end, err := s.BeginCall()
		if err != nil {
			t.Fatal(err)
		}
		ends = append(ends, end)
	}
	if _, err := s.BeginCall(); !errors.Is(err, ErrBusy) {
		t.Fatalf("4th call: %v, want ErrBusy", err)
	}
	ends[0]()
	ends[0]() // a second end is a no-op
	end, err := s.BeginCall()
	if err != nil {
		t.Fatalf("after one ended: %v", err)
	}
	if _, err := s.BeginCall(); !errors.Is(err, ErrBusy) {
		t.Fatalf("a repeated end freed two slots: %v", err)
	}
	end()
	if d := (Config{}).maxConcurrentCalls(); d != DefaultMaxConcurrentCalls || (Config{}).maxTabs() != DefaultMaxTabs {
		t.Fatalf("defaults: %d calls, %d tabs", d, (Config{}).maxTabs())
	}
}

// TestHoldResultOneAtATime: a session lets one call at a time bring a value
// from the page; the next waits for the release, or for its context.
func TestHoldResultOneAtATime(t *testing.T) {
	s := New("hold", nil, Config{})
	defer s.cancel()
	release, err := s.HoldResult(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := s.HoldResult(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a second hold while the first is held: %v, want the context's deadline", err)
	}
	got := make(chan error, 1)
	go func() {
		r, err := s.HoldResult(t.Context())
		if err == nil {
			r()
		}
		got <- err
	}()
	release()
	release() // a second release is a no-op
	if err := <-got; err != nil {
		t.Fatalf("the hold after the release: %v", err)
	}
}
