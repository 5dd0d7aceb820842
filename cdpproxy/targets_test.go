package cdpproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

func TestPrivilegedURL(t *testing.T) {
	for _, tt := range []struct {
		url  string
		want bool
	}{
		{"devtools://devtools/bundled/devtools_app.html", true},
		{"DEVTOOLS://devtools/bundled/inspector.html?ws=x", true},
		{"chrome-devtools://devtools/bundled/inspector.html", true},
		{"chrome://inspect/#devices", true},
		{"chrome://omnibox-popup.top-chrome/", true},
		{"Chrome://settings", true},
		{"chrome-untrusted://print/", true},
		{"chrome-search://local-ntp/", true},
		{"about:inspect", true},
		{"about:settings", true},
		{" \x01chrome://inspect\x00 ", true},
		{"ch\tro\nme://inspect", true},
		{"view-source:chrome://inspect", true},
		{"view-source: view-source:devtools://devtools/x", true},
		{"about:blank", false},
		{"about:blank#x", false},
		{"about:srcdoc", false},
		{"about:", false},
		{"", false},
		{"http://127.0.0.1/chrome://inspect", false},
		{"https://example.com/", false},
		{"data:text/html,devtools://", false},
		{"file:///etc/passwd", false}, // the file policy's business
		{"view-source:https://example.com/", false},
		{"chrome-extension://abc/page.html", false},
		{"/devtools/inspector.html", false},
	} {
		if got := privilegedURL(tt.url); got != tt.want {
			t.Errorf("privilegedURL(%q) = %v; want %v", tt.url, got, tt.want)
		}
	}
}

// Target ids of the tables below.
const (
	idPage      = "AAAA0000AAAA0000AAAA0000AAAA0000"
	idDevTools  = "DDDD0000DDDD0000DDDD0000DDDD0000"
	idDevTab    = "DDDD1111DDDD1111DDDD1111DDDD1111"
	idWebUI     = "EEEE0000EEEE0000EEEE0000EEEE0000"
	idListed    = "FFFF0000FFFF0000FFFF0000FFFF0000" // known only to the lookup
	devtoolsURL = "devtools://devtools/bundled/devtools_app.html?targetType=tab"
)

func targetInfoJSON(id, typ, u string) string {
	b, _ := json.Marshal(map[string]any{"targetId": id, "type": typ, "url": u, "title": "t", "attached": false})
	return string(b)
}

// seededInspector is an inspector whose browser has shown it, on this
// socket, a page, a DevTools window (with its tab target) and a WebUI page,
// and attached session "SP" to the page and "SD" to the DevTools window;
// its lookup knows idListed as a DevTools target too.
func seededInspector(t *testing.T, g *fileGuard) *inspector {
	t.Helper()
	targets := newTargetTable()
	lookup := func() error {
		targets.observe(idListed, "devtools://devtools/bundled/inspector.html")
		return nil
	}
	in := newInspector(g, targets, lookup, "")
	for _, ev := range []string{
		`{"method":"Target.targetCreated","params":{"targetInfo":` + targetInfoJSON(idPage, "page", "http://127.0.0.1:8080/a") + `}}`,
		`{"method":"Target.targetCreated","params":{"targetInfo":` + targetInfoJSON(idDevTools, "other", devtoolsURL) + `}}`,
		`{"method":"Target.targetCreated","params":{"targetInfo":` + targetInfoJSON(idDevTab, "tab", devtoolsURL) + `}}`,
		`{"method":"Target.targetCreated","params":{"targetInfo":` + targetInfoJSON(idWebUI, "browser_ui", "chrome://omnibox-popup.top-chrome/") + `}}`,
		`{"method":"Target.attachedToTarget","params":{"sessionId":"SP","targetInfo":` + targetInfoJSON(idPage, "page", "http://127.0.0.1:8080/a") + `,"waitingForDebugger":false}}`,
		`{"method":"Target.attachedToTarget","params":{"sessionId":"SD","targetInfo":` + targetInfoJSON(idDevTools, "other", devtoolsURL) + `,"waitingForDebugger":false}}`,
	} {
		in.upstream([]byte(ev))
	}
	// A navigation history with a WebUI entry, read on session SP.
	in.client([]byte(`{"id":70,"sessionId":"SP","method":"Page.getNavigationHistory"}`))
	in.upstream([]byte(`{"id":70,"sessionId":"SP","result":{"currentIndex":1,"entries":[` +
		`{"id":1,"url":"http://127.0.0.1:8080/a"},{"id":2,"url":"chrome://settings/"}]}}`))
	return in
}

// TestInspectTargetRefusals: every way to reach a DevTools or WebUI page
// through a CDP message is refused with the proxy's CDP error, with and
// without the file policy; the same calls on an ordinary page pass.
func TestInspectTargetRefusals(t *testing.T) {
	wrap := func(inner string) string {
		b, _ := json.Marshal(inner)
		return string(b)
	}
	tests := []struct {
		name string
		msg  string
		want string // substring of the refusal; "" means forwarded
		code int
	}{
		{"openDevTools", `{"id":1,"method":"Target.openDevTools","params":{"targetId":"` + idPage + `"}}`, "the DevTools frontend has powers", -32601},
		{"getDevToolsTarget", `{"id":1,"method":"Target.getDevToolsTarget","params":{"targetId":"` + idPage + `"}}`, "the DevTools frontend has powers", -32601},
		{"createTarget devtools", `{"id":2,"method":"Target.createTarget","params":{"url":"devtools://devtools/bundled/devtools_app.html"}}`, "are not reachable through this CDP proxy", -32000},
		{"createTarget chrome-devtools", `{"id":2,"method":"Target.createTarget","params":{"url":"chrome-devtools://devtools/bundled/inspector.html"}}`, "not reachable", -32000},
		{"createTarget chrome://inspect", `{"id":2,"method":"Target.createTarget","params":{"url":"chrome://inspect/#devices"}}`, "not reachable", -32000},
		{"createTarget about:inspect", `{"id":2,"method":"Target.createTarget","params":{"url":"about:inspect"}}`, "not reachable", -32000},
		{"createTarget chrome-untrusted", `{"id":2,"method":"Target.createTarget","params":{"url":"chrome-untrusted://print/"}}`, "not reachable", -32000},
		{"createTarget chrome in disguise", `{"id":2,"method":"Target.createTarget","params":{"url":" CH\trome://inspect"}}`, "not reachable", -32000},
		{"createTarget view-source of chrome", `{"id":2,"method":"Target.createTarget","params":{"url":"view-source:chrome://inspect"}}`, "not reachable", -32000},
		{"createTarget escaped", `{"id":2,"method":"Target.createTarget","params":{"url":"\u0064evtools://devtools/x"}}`, "not reachable", -32000},
		{"Page.navigate devtools", `{"id":3,"sessionId":"SP","method":"Page.navigate","params":{"url":"` + devtoolsURL + `"}}`, "not reachable", -32000},
		{"Page.navigate chrome://inspect", `{"id":3,"sessionId":"SP","method":"Page.navigate","params":{"url":"chrome://inspect"}}`, "not reachable", -32000},
		{"loadNetworkResource devtools", `{"id":3,"sessionId":"SP","method":"Network.loadNetworkResource","params":{"url":"devtools://devtools/x","options":{}}}`, "not reachable", -32000},
		{"Fetch.continueRequest to chrome", `{"id":3,"sessionId":"SP","method":"Fetch.continueRequest","params":{"requestId":"r","url":"chrome://settings"}}`, "not reachable", -32000},
		{"history entry of WebUI", `{"id":4,"sessionId":"SP","method":"Page.navigateToHistoryEntry","params":{"entryId":2}}`, "not reachable", -32000},
		{"attach to DevTools", `{"id":5,"method":"Target.attachToTarget","params":{"targetId":"` + idDevTools + `","flatten":true}}`, "not reachable", -32000},
		{"attach to a DevTools tab", `{"id":5,"method":"Target.attachToTarget","params":{"targetId":"` + idDevTab + `","flatten":true}}`, "not reachable", -32000},
		{"attach to WebUI", `{"id":5,"method":"Target.attachToTarget","params":{"targetId":"` + idWebUI + `","flatten":true}}`, "not reachable", -32000},
		{"attach to a listed DevTools", `{"id":5,"method":"Target.attachToTarget","params":{"targetId":"` + idListed + `","flatten":true}}`, "not reachable", -32000},
		{"attach to an unknown target", `{"id":5,"method":"Target.attachToTarget","params":{"targetId":"0123456789ABCDEF0123456789ABCDEF"}}`, "is not known to this CDP proxy", -32000},
		{"activate DevTools", `{"id":6,"method":"Target.activateTarget","params":{"targetId":"` + idDevTools + `"}}`, "not reachable", -32000},
		{"close DevTools", `{"id":6,"method":"Target.closeTarget","params":{"targetId":"` + idDevTools + `"}}`, "not reachable", -32000},
		{"info of DevTools", `{"id":6,"method":"Target.getTargetInfo","params":{"targetId":"` + idDevTools + `"}}`, "not reachable", -32000},
		{"autoAttachRelated to WebUI", `{"id":6,"method":"Target.autoAttachRelated","params":{"targetId":"` + idWebUI + `","waitForDebuggerOnStart":false}}`, "not reachable", -32000},
		{"command on a DevTools session", `{"id":7,"sessionId":"SD","method":"Runtime.evaluate","params":{"expression":"InspectorFrontendHost"}}`, "session \"SD\"", -32000},
		{"sendMessageToTarget to DevTools", `{"id":8,"method":"Target.sendMessageToTarget","params":{"targetId":"` + idDevTools + `","message":"{}"}}`, "not reachable", -32000},
		{"sendMessageToTarget on a DevTools session", `{"id":8,"method":"Target.sendMessageToTarget","params":{"sessionId":"SD","message":"{}"}}`, "session \"SD\"", -32000},
		{"nested command on a DevTools session", `{"id":8,"method":"Target.sendMessageToTarget","params":{"sessionId":"SP","message":` +
			wrap(`{"id":1,"sessionId":"SD","method":"Runtime.evaluate","params":{"expression":"1"}}`) + `}}`, "session \"SD\"", -32000},
		{"nested navigation to DevTools", `{"id":8,"method":"Target.sendMessageToTarget","params":{"sessionId":"SP","message":` +
			wrap(`{"id":1,"method":"Page.navigate","params":{"url":"devtools://devtools/x"}}`) + `}}`, "not reachable", -32000},
		{"system tracing", `{"id":9,"method":"Tracing.start","params":{"tracingBackend":"system"}}`, "traces the server's machine", -32000},
		{"sessionId not a string", `{"id":9,"sessionId":1,"method":"Runtime.evaluate"}`, "sessionId must be a string", -32600},
		{"method not a string", `{"id":9,"method":["Target.openDevTools"]}`, "method must be a string", -32600},

		{"attach to a page", `{"id":20,"method":"Target.attachToTarget","params":{"targetId":"` + idPage + `","flatten":true}}`, "", 0},
		{"command on a page session", `{"id":21,"sessionId":"SP","method":"Runtime.evaluate","params":{"expression":"1"}}`, "", 0},
		{"createTarget about:blank", `{"id":22,"method":"Target.createTarget","params":{"url":"about:blank"}}`, "", 0},
		{"navigate http", `{"id":23,"sessionId":"SP","method":"Page.navigate","params":{"url":"http://127.0.0.1:8080/b"}}`, "", 0},
		{"history entry of a page", `{"id":24,"sessionId":"SP","method":"Page.navigateToHistoryEntry","params":{"entryId":1}}`, "", 0},
		{"info of the own target", `{"id":25,"sessionId":"SP","method":"Target.getTargetInfo"}`, "", 0},
		{"chrome tracing", `{"id":26,"method":"Tracing.start","params":{"tracingBackend":"chrome"}}`, "", 0},
	}
	for _, restricted := range []bool{true, false} {
		var g *fileGuard
		if restricted {
			g = newFileGuard(FilePolicy{})
		}
		t.Run(fmt.Sprintf("file policy %v", restricted), func(t *testing.T) {
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					reply := seededInspector(t, g).client([]byte(tt.msg))
					if tt.want == "" {
						if reply != nil {
							t.Fatalf("refused: %s", reply)
						}
						return
					}
					a := mustRefuse(t, reply, tt.code, tt.want)
					var sent struct {
						ID        *int64 `json:"id"`
						SessionID any    `json:"sessionId"`
					}
					_ = json.Unmarshal([]byte(tt.msg), &sent)
					if s, _ := sent.SessionID.(string); *a.ID != *sent.ID || a.SessionID != s {
						t.Fatalf("refusal %+v does not echo id %d and sessionId %v", a, *sent.ID, sent.SessionID)
					}
				})
			}
		})
	}
}

// TestInspectUnreachableLookup: an unknown target that cannot be checked
// (the browser's list is unreachable) is refused, without the upstream
// error.
func TestInspectUnreachableLookup(t *testing.T) {
	in := newInspector(nil, nil, func() error { return errors.New("dial tcp 127.0.0.1:41234: refused") }, "")
	reply := in.client([]byte(`{"id":1,"method":"Target.closeTarget","params":{"targetId":"` + idPage + `"}}`))
	a := mustRefuse(t, reply, cdpServerError, "the browser could not be reached to check target")
	if strings.Contains(a.Error.Message, "41234") {
		t.Fatalf("refusal %q shows the internal endpoint", a.Error.Message)
	}
}

// TestInspectPageSocketOfPrivilegedTarget: a page socket whose target is
// (or becomes) privileged forwards nothing.
func TestInspectPageSocketOfPrivilegedTarget(t *testing.T) {
	targets := newTargetTable()
	targets.observe(idPage, "http://127.0.0.1/")
	in := newInspector(nil, targets, nil, idPage)
	if r := in.client([]byte(`{"id":1,"method":"Runtime.evaluate","params":{"expression":"1"}}`)); r != nil {
		t.Fatalf("an ordinary page socket refused: %s", r)
	}
	targets.observe(idPage, "chrome://settings")
	targets.observe(idPage, "http://127.0.0.1/") // once privileged, always
	mustRefuse(t, in.client([]byte(`{"id":2,"method":"Runtime.evaluate","params":{"expression":"1"}}`)), cdpServerError, "not reachable")
}

// TestInspectHidesTargets: browser messages about DevTools and WebUI
// targets never reach the client: their events and sessions are dropped,
// target lists lose them, Target.getTargetInfo of one is an error; other
// messages pass byte for byte.
func TestInspectHidesTargets(t *testing.T) {
	page := targetInfoJSON(idPage, "page", "http://127.0.0.1:8080/a")
	devtools := targetInfoJSON(idDevTools, "other", devtoolsURL)
	devTab := targetInfoJSON(idDevTab, "tab", devtoolsURL)
	webUI := targetInfoJSON(idWebUI, "browser_ui", "chrome://omnibox-popup.top-chrome/")
	wrap := func(inner string) string {
		b, _ := json.Marshal(inner)
		return string(b)
	}
	tests := []struct {
		name string
		msg  string
		want string // "drop", "same", or a substring of the rewritten message
		not  string // must not be in the rewritten message
	}{
		{"targetCreated of DevTools", `{"method":"Target.targetCreated","params":{"targetInfo":` + devtools + `}}`, "drop", ""},
		{"targetCreated of a DevTools tab", `{"method":"Target.targetCreated","params":{"targetInfo":` + devTab + `}}`, "drop", ""},
		{"targetCreated of WebUI", `{"method":"Target.targetCreated","params":{"targetInfo":` + webUI + `}}`, "drop", ""},
		{"targetInfoChanged of DevTools", `{"method":"Target.targetInfoChanged","params":{"targetInfo":` + devtools + `}}`, "drop", ""},
		{"attachedToTarget of DevTools", `{"method":"Target.attachedToTarget","params":{"sessionId":"SD2","targetInfo":` + devtools + `,"waitingForDebugger":true}}`, "drop", ""},
		{"event of a hidden session", `{"method":"Runtime.executionContextCreated","params":{"context":{"id":1}},"sessionId":"SD"}`, "drop", ""},
		{"answer on a hidden session", `{"id":4,"result":{},"sessionId":"SD"}`, "drop", ""},
		{"detachedFromTarget of a hidden session", `{"method":"Target.detachedFromTarget","params":{"sessionId":"SD","targetId":"` + idDevTools + `"}}`, "drop", ""},
		{"targetDestroyed of DevTools", `{"method":"Target.targetDestroyed","params":{"targetId":"` + idDevTools + `"}}`, "drop", ""},
		{"targetCrashed of WebUI", `{"method":"Target.targetCrashed","params":{"targetId":"` + idWebUI + `","status":"crashed","errorCode":1}}`, "drop", ""},
		{"getTargets", `{"id":5,"result":{"targetInfos":[` + devtools + `,` + page + `,` + devTab + `,` + webUI + `]}}`, idPage, "devtools:"},
		{"getTargets on a session", `{"id":5,"result":{"targetInfos":[` + webUI + `]},"sessionId":"SP"}`, `"targetInfos":[]`, "chrome:"},
		{"getTargetInfo of DevTools", `{"id":6,"result":{"targetInfo":` + devtools + `}}`, `"error":{"code":-32000`, "devtools_app"},
		{"nested attachedToTarget of DevTools", `{"method":"Target.receivedMessageFromTarget","params":{"sessionId":"SP","targetId":"` + idPage + `","message":` +
			wrap(`{"method":"Target.attachedToTarget","params":{"sessionId":"N1","targetInfo":`+devtools+`}}`) + `}}`, "drop", ""},
		{"nested getTargets", `{"method":"Target.receivedMessageFromTarget","params":{"sessionId":"SP","targetId":"` + idPage + `","message":` +
			wrap(`{"id":3,"result":{"targetInfos":[`+devtools+`,`+page+`]}}`) + `}}`, idPage, "devtools:"},
		{"message of a hidden session", `{"method":"Target.receivedMessageFromTarget","params":{"sessionId":"SD","message":"{}"}}`, "drop", ""},
		{"unreadable message about targets", `{"method":"Target.targetCreated","params":{"targetInfo":` + devtools + `}`, "drop", ""},
		{"targetInfo that is not one", `{"method":"Target.targetCreated","params":{"targetInfo":"devtools"}}`, "drop", ""},

		{"targetCreated of a page", `{"method":"Target.targetCreated","params":{"targetInfo":` + page + `}}`, "same", ""},
		{"attachedToTarget of a page", `{"method":"Target.attachedToTarget","params":{"sessionId":"SP2","targetInfo":` + page + `,"waitingForDebugger":true}}`, "same", ""},
		{"getTargets without privileged targets", `{"id":5,"result":{"targetInfos":[` + page + `]}}`, "same", ""},
		{"event of a page session", `{"method":"Page.loadEventFired","params":{"timestamp":1},"sessionId":"SP"}`, "same", ""},
		{"console text naming Target.", `{"method":"Runtime.consoleAPICalled","params":{"type":"log","args":[{"type":"string","value":"Target.openDevTools targetInfo"}]},"sessionId":"SP"}`, "same", ""},
		{"screenshot", `{"id":9,"result":{"data":"` + strings.Repeat("QUJD", 4096) + `"},"sessionId":"SP"}`, "same", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := seededInspector(t, nil).upstream([]byte(tt.msg))
			switch {
			case tt.want == "drop":
				if out != nil {
					t.Fatalf("forwarded %s", out)
				}
			case tt.want == "same":
				if !bytes.Equal(out, []byte(tt.msg)) {
					t.Fatalf("changed to %s", out)
				}
			default:
				if out == nil || !json.Valid(out) || !strings.Contains(string(out), tt.want) || strings.Contains(string(out), tt.not) {
					t.Fatalf("forwarded %s; want %q in it and not %q", out, tt.want, tt.not)
				}
			}
		})
	}

	// A session hidden at its attachment stays refused; a page session whose
	// target turns into WebUI is refused from then on, and its events dropped.
	in := seededInspector(t, nil)
	in.upstream([]byte(`{"method":"Target.attachedToTarget","params":{"sessionId":"SD2","targetInfo":` + devtools + `}}`))
	mustRefuse(t, in.client([]byte(`{"id":1,"sessionId":"SD2","method":"Runtime.evaluate"}`)), cdpServerError, "not reachable")
	if out := in.upstream([]byte(`{"method":"Target.targetInfoChanged","params":{"targetInfo":` +
		targetInfoJSON(idPage, "page", "chrome://settings/") + `}}`)); out != nil {
		t.Fatalf("a page turning into WebUI was announced: %s", out)
	}
	mustRefuse(t, in.client([]byte(`{"id":2,"sessionId":"SP","method":"Runtime.evaluate"}`)), cdpServerError, "not reachable")
	if out := in.upstream([]byte(`{"method":"Page.loadEventFired","params":{},"sessionId":"SP"}`)); out != nil {
		t.Fatalf("an event of the session was forwarded: %s", out)
	}
	// Detaching forgets the hidden session.
	if out := in.upstream([]byte(`{"method":"Target.detachedFromTarget","params":{"sessionId":"SD2"}}`)); out != nil || in.isHidden("SD2") {
		t.Fatalf("detachedFromTarget of a hidden session: %s", out)
	}
}

// TestProxyHidesPrivilegedTargets: through the proxy, /json/list leaves out
// the DevTools window and the WebUI page; /json/activate, /json/close and
// the WebSocket of either are 404 without reaching the browser; /json/new
// refuses their URLs; on a browser socket, attaching to them is refused
// (after a /json/list lookup) and the browser's answers and events about
// them are filtered. The same with and without the file policy.
func TestProxyHidesPrivilegedTargets(t *testing.T) {
	for _, unrestricted := range []bool{false, true} {
		t.Run(fmt.Sprintf("unrestricted=%v", unrestricted), func(t *testing.T) {
			fb := newFakeBrowser(t)
			tp := newTestProxy(t, Config{Files: FilePolicy{Unrestricted: unrestricted}})
			discovery := tp.publish(t, fb)
			c := httpClient(t)

			res := do(t, c, http.MethodGet, discovery+"/json/list", "", "")
			if res.status != http.StatusOK || strings.Count(res.body, `"id":`) != 2 ||
				strings.Contains(res.body, fakeDevTools) || strings.Contains(res.body, fakeWebUI) {
				t.Fatalf("/json/list: %d %s", res.status, res.body)
			}
			for _, path := range []string{"/json/activate/" + fakeDevTools, "/json/close/" + fakeDevTools,
				"/json/activate/" + fakeWebUI, "/json/close/" + fakeWebUI} {
				if res := do(t, c, http.MethodGet, discovery+path, "", ""); res.status != http.StatusNotFound || errorCode(t, res.body) != codeNotFound {
					t.Fatalf("%s: %d %s", path, res.status, res.body)
				}
			}
			if fb.actedOn.Load() != 0 {
				t.Fatal("a refused activate or close reached the browser")
			}
			if res := do(t, c, http.MethodGet, discovery+"/json/activate/ABC", "", ""); res.status != http.StatusOK || fb.actedOn.Load() != 1 {
				t.Fatalf("/json/activate/ABC: %d %s", res.status, res.body)
			}
			for _, id := range []string{fakeDevTools, fakeWebUI} {
				if _, resp, err := dialWS(t, wsURL(discovery, "/devtools/page/"+id), nil); err == nil || resp == nil || resp.StatusCode != http.StatusNotFound {
					t.Fatalf("WebSocket of %s: %v", id, err)
				}
			}
			for _, u := range []string{"devtools://devtools/bundled/devtools_app.html", "chrome://inspect", url.QueryEscape("chrome-devtools://devtools/x")} {
				res := do(t, c, http.MethodPut, discovery+"/json/new?"+u, "", "")
				if res.status != http.StatusForbidden || errorCode(t, res.body) != codeForbidden || !strings.Contains(res.body, "not reachable") {
					t.Fatalf("/json/new?%s: %d %s", u, res.status, res.body)
				}
			}

			fresh := tp.publish(t, fb) // a new generation knows no targets: the lookup must find them
			conn, _, err := dialWS(t, wsURL(fresh, "/devtools/browser/0393c7ae-1f2e"), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range []string{fakeDevTools, fakeWebUI} {
				_, got := echoOnce(t, conn, websocket.MessageText, []byte(`{"id":1,"method":"Target.attachToTarget","params":{"targetId":"`+id+`","flatten":true}}`))
				mustRefuse(t, got, cdpServerError, "not reachable")
			}
			_, got := echoOnce(t, conn, websocket.MessageText, []byte(`{"id":2,"method":"Target.openDevTools","params":{"targetId":"ABC"}}`))
			mustRefuse(t, got, cdpMethodNotFound, "Target.openDevTools")

			// The browser's answers and events, filtered on the way back.
			list := `{"id":3,"result":{"targetInfos":[` + targetInfoJSON("ABC", "page", "about:blank") + `,` +
				targetInfoJSON(fakeDevTools, "other", devtoolsURL) + `]}}`
			_, got = echoOnce(t, conn, websocket.MessageText, evaluate(3, "emit:"+list))
			if !strings.Contains(string(got), `"ABC"`) || strings.Contains(string(got), fakeDevTools) {
				t.Fatalf("Target.getTargets answer: %s", got)
			}
			created := `{"method":"Target.targetCreated","params":{"targetInfo":` + targetInfoJSON("NEWDT", "other", devtoolsURL) + `}}`
			ping := evaluate(5, "ping")
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			if err := conn.Write(ctx, websocket.MessageText, evaluate(4, "emit:"+created)); err != nil {
				t.Fatal(err)
			}
			// The event is dropped: the next message read is the echo of the ping.
			if _, got = echoOnce(t, conn, websocket.MessageText, ping); !bytes.Equal(got, ping) {
				t.Fatalf("after a hidden targetCreated the client read %s", got)
			}
		})
	}
}
