package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"
	"github.com/coder/websocket"
)

// cdpConn is a minimal CDP client over one WebSocket; calls are serialised.
// It keeps every message it read, events included.
type cdpConn struct {
	c    *websocket.Conn
	id   int
	seen []string
}

func dialCDPConn(t *testing.T, wsURL string) *cdpConn {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, wsURL, nil)
	if err != nil {
		t.Fatalf("dial CDP: %v", err)
	}
	c.SetReadLimit(16 << 20)
	t.Cleanup(func() { c.CloseNow() })
	return &cdpConn{c: c}
}

// call sends one command and returns its result, or the CDP error message.
func (c *cdpConn) call(t *testing.T, method string, params any) (json.RawMessage, string) {
	t.Helper()
	return c.callOn(t, "", method, params)
}

// callOn is call on a session ("" for none).
func (c *cdpConn) callOn(t *testing.T, sessionID, method string, params any) (json.RawMessage, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	c.id++
	m := map[string]any{"id": c.id, "method": method, "params": params}
	if sessionID != "" {
		m["sessionId"] = sessionID
	}
	msg, _ := json.Marshal(m)
	if err := c.c.Write(ctx, websocket.MessageText, msg); err != nil {
		t.Fatalf("%s: write: %v", method, err)
	}
	for {
		_, b, err := c.c.Read(ctx)
		if err != nil {
			t.Fatalf("%s: read: %v", method, err)
		}
		c.seen = append(c.seen, string(b))
		var r struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(b, &r) != nil || r.ID != c.id {
			continue // an event
		}
		if r.Error != nil {
			return nil, fmt.Sprintf("%d %s", r.Error.Code, r.Error.Message)
		}
		return r.Result, ""
	}
}

// mustCall is call that fails the test on a CDP error.
func (c *cdpConn) mustCall(t *testing.T, method string, params any) json.RawMessage {
	t.Helper()
	res, errMsg := c.call(t, method, params)
	if errMsg != "" {
		t.Fatalf("%s: %s", method, errMsg)
	}
	return res
}

// eval returns the string value of expr in the page.
func (c *cdpConn) eval(t *testing.T, expr string) string {
	t.Helper()
	res := c.mustCall(t, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true})
	var v struct {
		Result struct {
			Value any `json:"value"`
		} `json:"result"`
	}
	_ = json.Unmarshal(res, &v)
	return fmt.Sprint(v.Result.Value)
}

// evalUntil polls expr until it returns want.
func (c *cdpConn) evalUntil(t *testing.T, expr, want string) {
	t.Helper()
	testtier.EventuallyState(t, 15*time.Second, fmt.Sprintf("%s = %q", expr, want), func() (bool, string) {
		got := c.eval(t, expr)
		return got == want, fmt.Sprintf("%q", got)
	})
}

// setFiles puts a file input in the page and sets its files over CDP.
func (c *cdpConn) setFiles(t *testing.T, files ...string) string {
	t.Helper()
	c.eval(t, `(() => { let i = document.getElementById("cbm-f"); if (!i) { i = document.createElement("input"); i.type = "file"; i.id = "cbm-f"; document.body.append(i); } return "ok"; })()`)
	var doc struct {
		Root struct {
			NodeID int `json:"nodeId"`
		} `json:"root"`
	}
	_ = json.Unmarshal(c.mustCall(t, "DOM.getDocument", map[string]any{"depth": 0}), &doc)
	var q struct {
		NodeID int `json:"nodeId"`
	}
	_ = json.Unmarshal(c.mustCall(t, "DOM.querySelector", map[string]any{"nodeId": doc.Root.NodeID, "selector": "#cbm-f"}), &q)
	_, errMsg := c.call(t, "DOM.setFileInputFiles", map[string]any{"nodeId": q.NodeID, "files": files})
	return errMsg
}

func putStatus(t *testing.T, url string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPut, url, nil)
	resp, err := (&http.Client{Timeout: 15 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("PUT: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestCDPFilePolicy: a CDP client keeps the agents' file rules: file: URLs
// through /json/new (PUT), Target.createTarget and Page.navigate are refused
// with a CDP error naming the policy, and so is DOM.setFileInputFiles with a
// file outside the output directory (the working directory included); a
// file in the output directory, http navigation and Runtime.evaluate work. With
// --allow-unrestricted-file-access all of it passes.
func TestCDPFilePolicy(t *testing.T) {
	secretDir := t.TempDir()
	secret := filepath.Join(secretDir, "secret.txt")
	if err := os.WriteFile(secret, []byte("TOP-SECRET-4711"), 0o600); err != nil {
		t.Fatal(err)
	}
	fileURL := "file://" + secret
	srv := pages(t)

	t.Run("restricted", func(t *testing.T) {
		portRange, _ := freePorts(t, 1)
		c, out := inProcess(t, "--cdp-enabled", "--cdp-port-range", portRange)
		must(t, c, "browser_navigate", map[string]any{"url": srv.URL + "/lab.html"}, "- Page Title: Lab")
		discovery := *readyCDP(t, c).DiscoveryURL

		for _, q := range []string{fileURL, strings.ReplaceAll(fileURL, ":", "%3A")} {
			code, body := putStatus(t, discovery+"/json/new?"+q)
			if code != http.StatusForbidden || !strings.Contains(body, "file: URLs are refused by this server's file policy") {
				t.Fatalf("PUT /json/new?%s: %d %s", q, code, body)
			}
		}

		browser := dialCDPConn(t, browserWS(t, discovery))
		if _, errMsg := browser.call(t, "Target.createTarget", map[string]any{"url": fileURL}); !strings.Contains(errMsg, "-32000 Target.createTarget: file: URLs are refused") {
			t.Fatalf("Target.createTarget file: answered %q", errMsg)
		}
		if _, errMsg := browser.call(t, "Target.createTarget", map[string]any{"url": "about:blank"}); errMsg != "" {
			t.Fatalf("Target.createTarget about:blank: %s", errMsg)
		}

		_, ws := pageTarget(t, discovery, srv.URL+"/lab.html")
		page := dialCDPConn(t, ws)
		if _, errMsg := page.call(t, "Page.navigate", map[string]any{"url": fileURL}); !strings.Contains(errMsg, "--allow-unrestricted-file-access") {
			t.Fatalf("Page.navigate file: answered %q", errMsg)
		}
		if got := page.eval(t, "location.href"); got != srv.URL+"/lab.html" {
			t.Fatalf("after the refused navigation the page is at %q", got)
		}
		page.mustCall(t, "Page.navigate", map[string]any{"url": srv.URL + "/other.html"})
		page.evalUntil(t, "document.title", "Other")

		if errMsg := page.setFiles(t, secret); !strings.Contains(errMsg, "outside this session's directory") {
			t.Fatalf("DOM.setFileInputFiles outside the roots: answered %q", errMsg)
		}
		// The working directory is not a root (the --secrets file lives there).
		inWD, _ := filepath.Abs("cdp_files_test.go")
		if errMsg := page.setFiles(t, inWD); !strings.Contains(errMsg, "outside this session's directory") {
			t.Fatalf("DOM.setFileInputFiles of a file in the working directory: answered %q", errMsg)
		}
		if err := os.MkdirAll(out, 0o755); err != nil {
			t.Fatal(err)
		}
		upload := filepath.Join(out, "upload.txt")
		if err := os.WriteFile(upload, []byte("ok"), 0o644); err != nil {
			t.Fatal(err)
		}
		if errMsg := page.setFiles(t, upload); errMsg != "" {
			t.Fatalf("DOM.setFileInputFiles in the output dir: %s", errMsg)
		}
		if got := page.eval(t, `document.getElementById("cbm-f").files[0].name`); got != "upload.txt" {
			t.Fatalf("file input holds %q", got)
		}
		if strings.Contains(c.Stderr.String(), "TOP-SECRET") {
			t.Fatal("the secret reached the log")
		}
	})

	t.Run("unrestricted", func(t *testing.T) {
		portRange, _ := freePorts(t, 1)
		c, _ := inProcess(t, "--cdp-enabled", "--cdp-port-range", portRange, "--allow-unrestricted-file-access")
		must(t, c, "browser_navigate", map[string]any{"url": srv.URL + "/lab.html"}, "- Page Title: Lab")
		discovery := *readyCDP(t, c).DiscoveryURL
		if code, body := putStatus(t, discovery+"/json/new?"+fileURL); code != http.StatusOK {
			t.Fatalf("PUT /json/new?file: %d %s", code, body)
		}
		_, ws := pageTarget(t, discovery, srv.URL+"/lab.html")
		page := dialCDPConn(t, ws)
		if errMsg := page.setFiles(t, secret); errMsg != "" {
			t.Fatalf("DOM.setFileInputFiles: %s", errMsg)
		}
		page.mustCall(t, "Page.navigate", map[string]any{"url": fileURL})
		page.evalUntil(t, "document.body ? document.body.innerText.trim() : ''", "TOP-SECRET-4711")
	})
}
