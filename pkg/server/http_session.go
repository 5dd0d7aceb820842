package server

import (
	"crypto/rand"
	"sync"

	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

// idManager is mcp-go's SessionIdManager backed by the session registry: an
// ID is valid exactly while its session is registered, and terminating one
// (DELETE, the idle sweeper, CloseSessions) closes its browser.
type idManager struct{ reg *session.Registry }

// Generate mints an ID with 130 random bits (visible ASCII, as the spec
// requires).
func (m *idManager) Generate() string { return "mcp-session-" + rand.Text() }

// Validate fails for an unknown or ended session, which mcp-go answers 404.
func (m *idManager) Validate(id string) (bool, error) {
	if !m.reg.Has(id) {
		return false, session.ErrNotFound
	}
	return false, nil
}

// Terminate closes the session and waits for its browser to be gone.
func (m *idManager) Terminate(id string) (bool, error) {
	_ = m.reg.Close(id)
	return false, nil
}

// streams tracks the open GET (SSE) streams: at most one per session. The
// spec lets a server decline more; a client needs one to hear the server,
// and every extra one would hold a connection and a goroutine.
type streams struct {
	mu   sync.Mutex
	open map[string]bool // session key → a GET stream is open
}

// acquire marks key as streaming, or reports false if it already is. The
// caller calls release when its stream ends.
func (s *streams) acquire(key string) (release func(), ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open[key] {
		return nil, false
	}
	if s.open == nil {
		s.open = map[string]bool{}
	}
	s.open[key] = true
	return func() {
		s.mu.Lock()
		delete(s.open, key)
		s.mu.Unlock()
	}, true
}
