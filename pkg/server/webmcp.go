package server

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

// WebMCP (--caps webmcp): the tools the current tab's page registers
// become MCP tools of the MCP session whose browser shows it
// (tools/webmcp.go builds them). Over Streamable HTTP they are session
// tools (mcp-go's AddSessionTools): only that session lists and calls
// them, and notifications/tools/list_changed goes to it alone. Over stdio
// there is one client, and mcp-go's stdio session keeps no tools of its
// own: they are server tools, as stdio's resources are.
//
// The mirror keeps each MCP session's list in step with its browser: a
// page's registration, a navigation, a closed tab or a lost browser
// (session.Config.WebMCPChanged) and the end of every tool call (a tab
// switch) mark the session; one goroutine then compares the page's list
// with what the session was given and adds or deletes the difference. At
// the end of a call the caller's session is brought in step before the
// answer goes: over Streamable HTTP the list_changed then travels on the
// call's own stream (a change with no call in flight reaches a client
// that keeps a GET stream open, as the spec has it).

type webmcpMirror struct {
	s    *Server
	wake chan struct{} // one pending wake-up
	// syncMu makes one sync at a time: the worker's and a call's.
	syncMu sync.Mutex

	mu       sync.Mutex
	dirty    map[string]bool              // MCP session keys to bring in step
	byHandle map[string]string            // browser session id → MCP session key
	shown    map[string]map[string]string // MCP session key → tool name → its definition
}

func newWebMCPMirror(s *Server) *webmcpMirror {
	return &webmcpMirror{s: s, wake: make(chan struct{}, 1), dirty: map[string]bool{},
		byHandle: map[string]string{}, shown: map[string]map[string]string{}}
}

// hooks wires the mirror to mcp-go: a session's calls bind its browser
// session to it and may switch its tab; its end forgets it.
func (m *webmcpMirror) hooks(h *server.Hooks) {
	h.AddAfterCallTool(func(ctx context.Context, _ any, _ *mcp.CallToolRequest, _ any) {
		cs := server.ClientSessionFromContext(ctx)
		if cs == nil || cs.SessionID() == "" {
			return
		}
		key := cs.SessionID()
		if sess := m.s.sessionOf(key); sess != nil {
			m.mu.Lock()
			m.byHandle[sess.ID()] = key
			m.mu.Unlock()
		}
		m.mu.Lock()
		delete(m.dirty, key)
		m.mu.Unlock()
		m.sync(key)
	})
	h.AddOnUnregisterSession(func(_ context.Context, cs server.ClientSession) {
		m.mu.Lock()
		defer m.mu.Unlock()
		key := cs.SessionID()
		delete(m.shown, key)
		delete(m.dirty, key)
		for h, k := range m.byHandle {
			if k == key {
				delete(m.byHandle, h)
			}
		}
	})
}

// changed is session.Config.WebMCPChanged: quick, never blocks.
func (m *webmcpMirror) changed(handle string) {
	m.mu.Lock()
	key, ok := m.byHandle[handle]
	m.mu.Unlock()
	if ok {
		m.mark(key)
	}
}

func (m *webmcpMirror) mark(key string) {
	m.mu.Lock()
	m.dirty[key] = true
	m.mu.Unlock()
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// run brings marked sessions in step until the server's life ends.
func (m *webmcpMirror) run() {
	for {
		select {
		case <-m.s.life.Done():
			return
		case <-m.wake:
		}
		m.mu.Lock()
		keys := make([]string, 0, len(m.dirty))
		for k := range m.dirty {
			keys = append(keys, k)
		}
		clear(m.dirty)
		m.mu.Unlock()
		for _, k := range keys {
			m.sync(k)
		}
	}
}

// sync gives MCP session key the tools of its browser's current tab.
func (m *webmcpMirror) sync(key string) {
	m.syncMu.Lock()
	defer m.syncMu.Unlock()
	var want []server.ServerTool
	if sess := m.s.sessionOf(key); sess != nil {
		_, l := sess.WebMCP()
		want = m.s.env.WebMCPTools(l)
	}
	defs := make(map[string]string, len(want))
	for _, t := range want {
		b, _ := json.Marshal(t.Tool)
		defs[t.Tool.Name] = string(b)
	}
	m.mu.Lock()
	shown := m.shown[key]
	var gone []string
	for name := range shown {
		if _, ok := defs[name]; !ok {
			gone = append(gone, name)
		}
	}
	var add []server.ServerTool
	for _, t := range want {
		if shown[t.Tool.Name] != defs[t.Tool.Name] {
			add = append(add, t)
		}
	}
	if len(defs) == 0 {
		delete(m.shown, key)
	} else {
		m.shown[key] = defs
	}
	m.mu.Unlock()
	if len(gone) == 0 && len(add) == 0 {
		return
	}
	log := m.s.log.Debug().Str("session", redactSessionID(key)).Int("added", len(add)).Int("removed", len(gone))
	if m.s.transport() == nil {
		if len(gone) > 0 {
			m.s.mcp.DeleteTools(gone...)
		}
		if len(add) > 0 {
			m.s.mcp.AddTools(add...)
		}
		log.Msg("webmcp tools changed")
		return
	}
	var err error
	if len(gone) > 0 {
		err = m.s.mcp.DeleteSessionTools(key, gone...)
	}
	if len(add) > 0 && err == nil {
		err = m.s.mcp.AddSessionTools(key, add...)
	}
	if err != nil {
		// The MCP session ended meanwhile: its tools went with it.
		m.s.log.Debug().Err(err).Str("session", redactSessionID(key)).Msg("webmcp tools not changed")
		return
	}
	log.Msg("webmcp tools changed")
}

// sessionOf is the browser session of MCP session key, without making
// one: nil when it has none (yet, or any more).
func (s *Server) sessionOf(key string) *session.Session {
	if ht := s.transport(); ht != nil {
		sess, err := ht.reg.Get(key)
		if err != nil {
			return nil
		}
		return sess
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stdio
}
