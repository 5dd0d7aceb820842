package session

import (
	"context"
	"errors"
	"testing"
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
