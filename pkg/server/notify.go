package server

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/rs/zerolog"

	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

// Log notification limits per MCP session: a burst of logBurst messages,
// then logRate a second. What does not fit is counted and summed up in one
// "N messages dropped" line once the bucket has room again.
const (
	logBurst = 20
	logRate  = 5.0
)

// defaultLogLevel is the level before the client sends logging/setLevel.
// The spec leaves it to the server; "error" (mcp-go's own default too) means
// an agent that never asked hears only about console errors, crashes and a
// lost browser, never about routine events.
const defaultLogLevel = mcp.LoggingLevelError

// logLevels orders MCP's logging levels.
var logLevels = map[mcp.LoggingLevel]int{
	mcp.LoggingLevelDebug: 0, mcp.LoggingLevelInfo: 1, mcp.LoggingLevelNotice: 2, mcp.LoggingLevelWarning: 3,
	mcp.LoggingLevelError: 4, mcp.LoggingLevelCritical: 5, mcp.LoggingLevelAlert: 6, mcp.LoggingLevelEmergency: 7,
}

// logSender delivers one log notification to one MCP session (mcp-go's
// SendLogMessageToSpecificClient in the server; a recorder in tests).
type logSender func(sessionID string, n mcp.LoggingMessageNotification) error

// notifier sends session notices to their MCP session as
// notifications/message, at or above the level the client set, through a
// token bucket per session so a noisy page cannot flood the client.
type notifier struct {
	send logSender
	log  zerolog.Logger
	now  func() time.Time // time.Now; a fake clock in tests

	mu       sync.Mutex
	sessions map[string]*logBucket
	closed   bool
}

// logBucket is one MCP session's level and rate-limit state.
type logBucket struct {
	level   mcp.LoggingLevel
	tokens  float64
	last    time.Time
	dropped int
	worst   mcp.LoggingLevel // the most severe level dropped
	summary *time.Timer      // pending "N dropped" line
}

func newNotifier(send logSender, log zerolog.Logger) *notifier {
	return &notifier{send: send, log: log, now: time.Now, sessions: map[string]*logBucket{}}
}

// hooks wires the notifier to mcp-go: the level a client sets is recorded
// (mcp-go validates it: an unknown level is invalid params), and a session's
// state is dropped when it ends.
func (n *notifier) hooks(h *server.Hooks) {
	h.AddAfterSetLevel(func(ctx context.Context, _ any, req *mcp.SetLevelRequest, _ *mcp.EmptyResult) {
		if cs := server.ClientSessionFromContext(ctx); cs != nil {
			n.setLevel(cs.SessionID(), req.Params.Level)
		}
	})
	h.AddOnUnregisterSession(func(_ context.Context, cs server.ClientSession) { n.forget(cs.SessionID()) })
}

// bucket returns id's state, creating it; n.mu is held.
func (n *notifier) bucket(id string) *logBucket {
	b := n.sessions[id]
	if b == nil {
		b = &logBucket{level: defaultLogLevel, tokens: logBurst, last: n.now()}
		n.sessions[id] = b
	}
	return b
}

func (n *notifier) setLevel(id string, level mcp.LoggingLevel) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.closed {
		n.bucket(id).level = level
	}
}

func (n *notifier) forget(id string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if b := n.sessions[id]; b != nil && b.summary != nil {
		b.summary.Stop()
	}
	delete(n.sessions, id)
}

// close stops pending summaries; later notices are ignored.
func (n *notifier) close() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.closed = true
	for id, b := range n.sessions {
		if b.summary != nil {
			b.summary.Stop()
		}
		delete(n.sessions, id)
	}
}

// refill adds the tokens earned since the last look; n.mu is held.
func (n *notifier) refill(b *logBucket) {
	now := n.now()
	b.tokens = min(logBurst, b.tokens+now.Sub(b.last).Seconds()*logRate)
	b.last = now
}

// notice is session.Config.Notify: it sends nt to its MCP session if the
// client's level admits it and the bucket has a token, and counts it as
// dropped otherwise. It never blocks: mcp-go's send is a non-blocking
// channel push.
func (n *notifier) notice(nt session.Notice) {
	level := mcp.LoggingLevel(nt.Level)
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return
	}
	b := n.bucket(nt.Session)
	if logLevels[level] < logLevels[b.level] {
		n.mu.Unlock()
		return
	}
	n.refill(b)
	if b.tokens < 1 {
		b.dropped++
		if b.worst == "" || logLevels[level] > logLevels[b.worst] {
			b.worst = level
		}
		if b.summary == nil {
			id := nt.Session
			b.summary = time.AfterFunc(time.Duration(float64(time.Second)/logRate)+time.Millisecond, func() { n.summarize(id) })
		}
		n.mu.Unlock()
		return
	}
	b.tokens--
	n.mu.Unlock()
	n.deliver(nt.Session, level, nt.Kind, nt.Text)
}

// summarize sends the "N messages dropped" line once a token is back (at the
// most severe level dropped, so the client's level admits it).
func (n *notifier) summarize(id string) {
	n.mu.Lock()
	b := n.sessions[id]
	if n.closed || b == nil {
		n.mu.Unlock()
		return
	}
	n.refill(b)
	if b.tokens < 1 {
		b.summary.Reset(time.Duration((1 - b.tokens) / logRate * float64(time.Second)))
		n.mu.Unlock()
		return
	}
	b.tokens--
	dropped, worst := b.dropped, b.worst
	b.dropped, b.worst, b.summary = 0, "", nil
	n.mu.Unlock()
	n.deliver(id, worst, "notify", fmt.Sprintf("%d messages dropped (more than %d a second); see browser_console_messages for the page's console", dropped, int(logRate)))
}

func (n *notifier) deliver(id string, level mcp.LoggingLevel, kind, text string) {
	err := n.send(id, mcp.NewLoggingMessageNotification(level, "cloakbrowser-mcp/"+kind, text))
	if err != nil {
		// The session ended or its channel is full: nothing to retry.
		n.log.Debug().Err(err).Str("session", redactSessionID(id)).Msg("log notification not delivered")
	}
}
