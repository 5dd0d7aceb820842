package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

// SessionLog writes every tool call and its response text to a markdown
// file in the caller's own directory of the output directory
// (--save-session): the output directory itself for stdio and token-less
// HTTP, <output-dir>/<principal>/ for a bearer token. One file per MCP
// session, appended after each call through the directory's os.Root, and
// counted in that principal's --output-max-size budget only: a log never
// evicts another principal's files. Arguments and responses go through the
// --secrets redaction first.
type SessionLog struct {
	mu    sync.Mutex
	files map[string]string // session id → log name in its principal's directory
}

// NewSessionLog returns a SessionLog.
func NewSessionLog() *SessionLog {
	return &SessionLog{files: map[string]string{}}
}

// record appends one call to its session's log. A failure is logged, never
// returned: the call itself has succeeded or failed already.
func (l *SessionLog) record(ctx context.Context, env *Env, tool string, args map[string]any, res *mcp.CallToolResult) {
	if l == nil {
		return
	}
	id := "session"
	var sess *session.Session
	if env.Session != nil {
		if s, err := env.Session(ctx); err == nil && s != nil {
			sess, id = s, s.ID()
		}
	}
	argText, err := json.MarshalIndent(args, "", "  ")
	if err != nil {
		argText = []byte(fmt.Sprintf("%v", args))
	}
	var out []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case mcp.TextContent:
			out = append(out, c.Text)
		case mcp.ImageContent:
			out = append(out, fmt.Sprintf("[image %s]", c.MIMEType))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### Tool call: %s\n\n_%s_", tool, time.Now().UTC().Format(time.RFC3339Nano))
	if res.IsError {
		b.WriteString(" (error)")
	}
	fmt.Fprintf(&b, "\n\n- Args\n\n```json\n%s\n```\n\n- Result\n\n````markdown\n%s\n````\n\n", argText, strings.Join(out, "\n"))
	text := env.Output.Secrets.Redact(b.String())

	a, err := env.filesOf(sess)
	if err != nil {
		env.Log.Warn().Err(err).Msg("session log: cannot open the output directory")
		return
	}
	defer a.Close()
	l.mu.Lock()
	defer l.mu.Unlock()
	name, ok := l.files[id]
	if !ok {
		name = fmt.Sprintf("session-%s-%s.md", time.Now().UTC().Format("2006-01-02T15-04-05.000Z"), safeName(id))
		l.files[id] = name
		text = fmt.Sprintf("# Session %s\n\n", safeName(id)) + text
	}
	if _, err := a.Append(name, []byte(text)); err != nil {
		env.Log.Warn().Err(err).Msg("session log: cannot write the log")
	}
}

// safeName keeps a session id usable in a file name.
func safeName(id string) string {
	var b strings.Builder
	for _, r := range id {
		if r < 128 && (r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		}
		if b.Len() >= 40 {
			break
		}
	}
	if b.Len() == 0 {
		return "session"
	}
	return b.String()
}
