package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// SessionLog writes every tool call and its response text to a markdown
// file in the output directory (--save-session), one file per MCP session,
// appended after each call. Arguments and responses go through the
// --secrets redaction first.
type SessionLog struct {
	// Dir is the output directory the logs are written in.
	Dir string

	mu    sync.Mutex
	files map[string]string // session id → log path
}

// NewSessionLog returns a SessionLog writing into dir.
func NewSessionLog(dir string) *SessionLog {
	return &SessionLog{Dir: dir, files: map[string]string{}}
}

// record appends one call to its session's log. A failure is logged, never
// returned: the call itself has succeeded or failed already.
func (l *SessionLog) record(ctx context.Context, env *Env, tool string, args map[string]any, res *mcp.CallToolResult) {
	if l == nil {
		return
	}
	id := "session"
	if env.Session != nil {
		if s, err := env.Session(ctx); err == nil && s != nil {
			id = s.ID()
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

	l.mu.Lock()
	defer l.mu.Unlock()
	p, ok := l.files[id]
	if !ok {
		if err := os.MkdirAll(l.Dir, 0o755); err != nil {
			env.Log.Warn().Err(err).Msg("session log: cannot create the output directory")
			return
		}
		name := fmt.Sprintf("session-%s-%s.md", time.Now().UTC().Format("2006-01-02T15-04-05.000Z"), safeName(id))
		p = filepath.Join(l.Dir, name)
		l.files[id] = p
		text = fmt.Sprintf("# Session %s\n\n", safeName(id)) + text
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		env.Log.Warn().Err(err).Msg("session log: cannot open the log")
		return
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		env.Log.Warn().Err(err).Msg("session log: cannot write the log")
	}
	env.evictOutput(p)
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
