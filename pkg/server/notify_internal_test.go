package server

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/rs/zerolog"

	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

type sentLog struct {
	session string
	level   mcp.LoggingLevel
	text    string
}

type logRecorder struct {
	mu   sync.Mutex
	sent []sentLog
}

func (r *logRecorder) send(id string, n mcp.LoggingMessageNotification) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = append(r.sent, sentLog{id, n.Params.Level, fmt.Sprint(n.Params.Data)})
	return nil
}

func (r *logRecorder) take() []sentLog {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.sent
	r.sent = nil
	return out
}

// TestNotifierLevels: nothing below the session's level is sent; the level
// before setLevel is error; sessions are independent.
func TestNotifierLevels(t *testing.T) {
	rec := &logRecorder{}
	n := newNotifier(rec.send, zerolog.Nop())
	defer n.close()
	cases := []struct {
		name    string
		setTo   mcp.LoggingLevel // "" = never set
		level   session.NoticeLevel
		sentOut bool
	}{
		{"default admits error", "", session.NoticeError, true},
		{"default drops warning", "", session.NoticeWarning, false},
		{"info admits info", mcp.LoggingLevelInfo, session.NoticeInfo, true},
		{"info drops debug", mcp.LoggingLevelInfo, session.NoticeDebug, false},
		{"critical drops error", mcp.LoggingLevelCritical, session.NoticeError, false},
		{"critical admits critical", mcp.LoggingLevelCritical, session.NoticeCritical, true},
		{"debug admits debug", mcp.LoggingLevelDebug, session.NoticeDebug, true},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id := fmt.Sprintf("s%d", i)
			if tc.setTo != "" {
				n.setLevel(id, tc.setTo)
			}
			n.notice(session.Notice{Session: id, Level: tc.level, Kind: "console", Text: "x"})
			got := rec.take()
			if tc.sentOut != (len(got) == 1) {
				t.Fatalf("sent %v, want sent=%v", got, tc.sentOut)
			}
			if tc.sentOut && (got[0].session != id || got[0].level != mcp.LoggingLevel(tc.level)) {
				t.Fatalf("sent %+v", got[0])
			}
		})
	}
}

// TestNotifierRateLimit: a flood sends a burst, drops the rest and, once
// the bucket refills, says how many were dropped at the worst level
// dropped; another session is not affected; forget stops the summary.
func TestNotifierRateLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &logRecorder{}
		n := newNotifier(rec.send, zerolog.Nop())
		defer n.close()
		n.setLevel("noisy", mcp.LoggingLevelDebug)
		for i := range 100 {
			level := session.NoticeInfo
			if i == 50 {
				level = session.NoticeError
			}
			n.notice(session.Notice{Session: "noisy", Level: level, Kind: "console", Text: fmt.Sprint(i)})
		}
		n.notice(session.Notice{Session: "quiet", Level: session.NoticeError, Kind: "crash", Text: "crashed"})
		got := rec.take()
		var noisy int
		for _, s := range got {
			if s.session == "noisy" {
				noisy++
			}
		}
		if noisy != logBurst || len(got) != logBurst+1 {
			t.Fatalf("sent %d for the noisy session (want %d), %d in all", noisy, logBurst, len(got))
		}
		time.Sleep(time.Second)
		synctest.Wait()
		got = rec.take()
		if len(got) != 1 || got[0].level != mcp.LoggingLevelError || !strings.HasPrefix(got[0].text, "80 messages dropped") {
			t.Fatalf("summary: %+v", got)
		}
		// Recovered: the next message goes out, with no second summary.
		n.notice(session.Notice{Session: "noisy", Level: session.NoticeInfo, Kind: "console", Text: "after"})
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if got = rec.take(); len(got) != 1 || got[0].text != "after" {
			t.Fatalf("after recovery: %+v", got)
		}
		// A session that ends takes its pending summary with it.
		for range logBurst + 5 {
			n.notice(session.Notice{Session: "gone", Level: session.NoticeError, Kind: "console", Text: "x"})
		}
		n.forget("gone")
		rec.take()
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if got = rec.take(); len(got) != 0 {
			t.Fatalf("after forget: %+v", got)
		}
	})
}
