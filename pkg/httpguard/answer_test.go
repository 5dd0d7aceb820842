package httpguard

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestEvery503SaysWhenToRetry: a 503 carries Retry-After, the writer's own
// when it set one; other statuses get none.
func TestEvery503SaysWhenToRetry(t *testing.T) {
	for _, c := range []struct {
		name   string
		status int
		preset string
		want   string
	}{
		{"503 without one", http.StatusServiceUnavailable, "", DefaultRetryAfter},
		{"503 with its own", http.StatusServiceUnavailable, "30", "30"},
		{"404", http.StatusNotFound, "", ""},
		{"200", http.StatusOK, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			if c.preset != "" {
				w.Header().Set("Retry-After", c.preset)
			}
			WriteError(w, c.status, nil, -32000, "x")
			if got := w.Header().Get("Retry-After"); got != c.want || w.Code != c.status {
				t.Fatalf("status %d, Retry-After %q; want %d, %q", w.Code, got, c.status, c.want)
			}
		})
	}
}
