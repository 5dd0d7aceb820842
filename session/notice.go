package session

import (
	"fmt"

	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
)

// NoticeLevel is the severity of a Notice, named as MCP's logging levels
// (RFC 5424 syslog severities).
type NoticeLevel string

// Notice levels, least severe first.
const (
	NoticeDebug    NoticeLevel = "debug"
	NoticeInfo     NoticeLevel = "info"
	NoticeNotice   NoticeLevel = "notice"
	NoticeWarning  NoticeLevel = "warning"
	NoticeError    NoticeLevel = "error"
	NoticeCritical NoticeLevel = "critical"
)

// Notice is something that happened in a session that an operator or an
// agent may want to hear about as it happens, not only with the next tool
// response: a console error, a crashed page, a lost or relaunched browser,
// an idle close, a finished download. Config.Notify receives them.
type Notice struct {
	// Session is the ID of the session it happened in.
	Session string
	// Level is its severity.
	Level NoticeLevel
	// Kind names the source: "console", "crash", "browser", "idle",
	// "download".
	Kind string
	// Text is one human-readable line (page text is cut as page.Cut does).
	Text string
}

// consoleLevels maps a console message type to a notice level.
var consoleLevels = map[string]NoticeLevel{
	"error": NoticeError, "pageerror": NoticeError, "assert": NoticeError,
	"warning": NoticeWarning,
	"debug":   NoticeDebug, "trace": NoticeDebug,
}

// notify hands a notice to Config.Notify, if set. It never blocks on the
// receiver's behalf beyond the call itself: receivers must be quick.
func (s *Session) notify(level NoticeLevel, kind, format string, args ...any) {
	if s.cfg.Notify == nil {
		return
	}
	s.cfg.Notify(Notice{Session: s.id, Level: level, Kind: kind, Text: page.Cut(fmt.Sprintf(format, args...))})
}

// notifyConsole reports one console message of tab t.
func (s *Session) notifyConsole(t *page.Tab, typ, text string) {
	if s.cfg.Notify == nil {
		return
	}
	level, ok := consoleLevels[typ]
	if !ok {
		level = NoticeInfo
	}
	what := "console " + typ
	if typ == "pageerror" {
		what = "uncaught error"
	}
	s.notify(level, "console", "tab %d: %s: %s", t.ID, what, text)
}
