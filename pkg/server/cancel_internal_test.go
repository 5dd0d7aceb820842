package server

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/rs/zerolog"
)

// TestCancelStdioWriter: only the marked id's response is dropped, once;
// requests and notifications with that id pass; 1 and 1.0 are one id.
func TestCancelStdioWriter(t *testing.T) {
	c := newCancels(zerolog.Nop())
	var out bytes.Buffer
	w := c.stdioWriter(&out)
	c.stdio[`1`] = true
	c.stdio[`"a"`] = true
	lines := []struct {
		line string
		kept bool
	}{
		{`{"jsonrpc":"2.0","id":2,"result":{}}` + "\n", true},
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n", true},
		{`{"jsonrpc":"2.0","id":1.0,"result":{"content":[]}}` + "\n", false},
		{`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n", true},
		{`{"jsonrpc":"2.0","id":"a","error":{"code":-1,"message":"x"}}` + "\n", false},
		{`not json` + "\n", true},
	}
	for _, l := range lines {
		out.Reset()
		if n, err := w.Write([]byte(l.line)); n != len(l.line) || err != nil {
			t.Fatalf("write %q: %d %v", l.line, n, err)
		}
		if kept := out.Len() > 0; kept != l.kept {
			t.Errorf("%q: kept=%v, want %v", l.line, kept, l.kept)
		}
	}
	if len(c.stdio) != 0 {
		t.Errorf("marks left: %v", c.stdio)
	}
}

// TestCancelHTTPWriter: a POST whose call was cancelled before its response
// started answers 202 with no body; one cancelled mid-stream keeps what was
// streamed and drops the rest; one not cancelled is untouched.
func TestCancelHTTPWriter(t *testing.T) {
	c := newCancels(zerolog.Nop())
	cases := []struct {
		name       string
		cancelAt   int // the write before which the call is marked; -1 never
		wantStatus int
		wantBody   string
	}{
		{"not cancelled", -1, http.StatusOK, "event1event2"},
		{"cancelled before the response", 0, http.StatusAccepted, ""},
		{"cancelled mid-stream", 1, http.StatusOK, "event1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := c.httpHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				f := r.Context().Value(dropFlagKey{}).(*dropFlag)
				for i, chunk := range []string{"event1", "event2"} {
					if i == tc.cancelAt {
						f.set.Store(true)
					}
					if i == 0 {
						w.Header().Set("Content-Type", "text/event-stream")
						w.WriteHeader(http.StatusOK)
					}
					_, _ = w.Write([]byte(chunk))
					w.(http.Flusher).Flush()
				}
			}))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/mcp", nil))
			if rec.Code != tc.wantStatus || rec.Body.String() != tc.wantBody {
				t.Fatalf("got %d %q, want %d %q", rec.Code, rec.Body.String(), tc.wantStatus, tc.wantBody)
			}
		})
	}
}
