package session

import (
	"errors"
	"fmt"
	"sync"
)

// Per-session bounds used when Config leaves them zero.
const (
	DefaultMaxTabs            = 32
	DefaultMaxConcurrentCalls = 8
)

// ErrBusy means the session already has Config.MaxConcurrentCalls tool calls
// in flight.
var ErrBusy = errors.New("session busy")

func (c Config) maxTabs() int { return orDefault(c.MaxTabs, DefaultMaxTabs) }

func (c Config) maxConcurrentCalls() int {
	return orDefault(c.MaxConcurrentCalls, DefaultMaxConcurrentCalls)
}

// callGate counts a session's tool calls in flight. The zero value is ready.
type callGate struct {
	mu sync.Mutex
	n  int
}

// BeginCall admits one tool call, or fails at once with ErrBusy (wrapped,
// saying what to do) when the session already has MaxConcurrentCalls in
// flight: a client that floods one session gets a short answer instead of
// a queue that holds their memory. The caller calls end when its call has
// answered; end may be called more than once.
func (s *Session) BeginCall() (end func(), err error) {
	max := s.cfg.maxConcurrentCalls()
	g := &s.calls
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.n >= max {
		return nil, fmt.Errorf("%w: this session already has %d tool calls in flight, its limit (--max-concurrent-calls); retry once one has answered", ErrBusy, max)
	}
	g.n++
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			g.n--
			g.mu.Unlock()
		})
	}, nil
}
