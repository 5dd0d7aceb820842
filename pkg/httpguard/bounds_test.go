package httpguard_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/pkg/config"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/httpguard"
)

// TestReadBody: the body cap (--http-max-body-bytes, 4 MiB by default)
// refuses a larger body whether or not it declares its length.
func TestReadBody(t *testing.T) {
	cases := []struct {
		name    string
		max     int64
		body    string
		chunked bool // no Content-Length
		status  int  // 0: read
		text    string
	}{
		{"under the cap", 16, `{"a":1}`, false, 0, ""},
		{"at the cap", 7, `{"a":1}`, false, 0, ""},
		{"declared over the cap", 6, `{"a":1}`, false, http.StatusRequestEntityTooLarge, "the limit is 6 bytes (--http-max-body-bytes)"},
		{"chunked over the cap", 6, `{"a":1}`, true, http.StatusRequestEntityTooLarge, "the limit is 6 bytes"},
		{"chunked under the cap", 16, `{"a":1}`, true, 0, ""},
		{"default cap", 0, strings.Repeat("x", 1<<20), false, 0, ""},
		{"empty", 16, "", false, 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := httpguard.New(config.HTTP{MaxBodyBytes: tc.max}, port, false)
			r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(tc.body))
			if tc.chunked {
				r.ContentLength = -1
			}
			body, status, err := p.ReadBody(httptest.NewRecorder(), r)
			if status != tc.status {
				t.Fatalf("status %d (%v), want %d", status, err, tc.status)
			}
			if tc.status == 0 {
				if err != nil || string(body) != tc.body {
					t.Fatalf("read %d bytes, %v", len(body), err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.text) {
				t.Fatalf("error %v, want %q", err, tc.text)
			}
		})
	}
}

// TestBoundBody: through a real connection, a body must arrive within the
// total bound and never pause past the idle bound (408 from ReadBody);
// short pauses are fine, and a handler that outlasts the bound after the
// body arrived is not cut.
func TestBoundBody(t *testing.T) {
	// Wide margins: the race detector on a busy 2-core machine delays a
	// writer by a few hundred milliseconds.
	const total, idle = 3 * time.Second, time.Second
	p := httpguard.New(config.HTTP{}, port, false)
	srv := httptest.NewServer(httpguard.BoundBody(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, status, err := p.ReadBody(w, r)
		if err != nil {
			httpguard.WriteError(w, status, nil, -32600, err.Error())
			return
		}
		if r.URL.Path == "/slow" {
			time.Sleep(total + idle) // past both bounds, after the body
		}
		fmt.Fprintf(w, "%d", len(body))
	}), total, idle))
	t.Cleanup(srv.Close)

	cases := []struct {
		name   string
		path   string
		parts  []string
		pause  time.Duration // before each part
		status int
		text   string
	}{
		{"whole body at once", "/", []string{"0123456789"}, 0, 200, "10"},
		{"short pauses", "/", []string{"0123", "4567", "89"}, idle / 10, 200, "10"},
		{"stalled body", "/", []string{"0123", "4567"}, idle * 2, http.StatusRequestTimeout, "Request body too slow"},
		{"trickle past the total", "/", []string{"01", "23", "45", "67", "89"}, total / 4, http.StatusRequestTimeout, "within 3s"},
		{"handler outlasts the bound", "/slow", []string{"0123456789"}, 0, 200, "10"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n", tc.path)
			for _, part := range tc.parts {
				time.Sleep(tc.pause)
				if _, err := io.WriteString(conn, part); err != nil {
					break // cut: the answer tells
				}
			}
			_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			res, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != tc.status || !strings.Contains(string(b), tc.text) {
				t.Fatalf("%d %s, want %d with %q", res.StatusCode, b, tc.status, tc.text)
			}
		})
	}
}
