package cdpproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// cdpAnswer is a CDP answer as a client reads it.
type cdpAnswer struct {
	ID        *int64 `json:"id"`
	SessionID string `json:"sessionId"`
	Error     *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func TestInspectClientMessages(t *testing.T) {
	ft := newFileTree(t)
	g := newFileGuard(FilePolicy{InputRoots: []string{ft.work}, OutputDir: ft.out})
	inFile, _ := json.Marshal(filepath.Join(ft.work, "in.txt"))
	outFile, _ := json.Marshal(filepath.Join(ft.outside, "key"))
	outDir, _ := json.Marshal(ft.out)
	tests := []struct {
		name string
		msg  string
		want string // substring of the refusal; "" means forwarded
		code int
	}{
		{"Runtime.evaluate", `{"id":1,"method":"Runtime.evaluate","params":{"expression":"location.href = 'file:///etc/passwd'"}}`, "", 0},
		{"Runtime.evaluate with escapes", `{"id":1,"method":"Runtime.evaluate","params":{"expression":"\"a\\nb\""}}`, "", 0},
		{"addScriptToEvaluateOnNewDocument", `{"id":1,"method":"Page.addScriptToEvaluateOnNewDocument","params":{"source":"1"}}`, "", 0},
		{"Page.navigate http", `{"id":2,"method":"Page.navigate","params":{"url":"http://127.0.0.1/"}}`, "", 0},
		{"Page.navigate file", `{"id":3,"method":"Page.navigate","params":{"url":"file:///etc/passwd"}}`, "Page.navigate: file: URLs are refused by this server's file policy", -32000},
		{"Page.navigate file in a flat session", `{"id":3,"sessionId":"S1","method":"Page.navigate","params":{"url":"file:///etc/passwd"}}`, "file: URLs are refused", -32000},
		{"Target.createTarget file", `{"id":4,"method":"Target.createTarget","params":{"url":"FILE:///etc/passwd"}}`, "file: URLs are refused", -32000},
		{"Target.createTarget about:blank", `{"id":4,"method":"Target.createTarget","params":{"url":"about:blank"}}`, "", 0},
		{"method spelt with escapes", `{"id":5,"method":"Page.na\u0076igate","params":{"url":"file:///etc/passwd"}}`, "file: URLs are refused", -32000},
		{"url spelt with escapes", `{"id":5,"method":"Page.navigate","params":{"url":"\u0066ile:///etc/passwd"}}`, "file: URLs are refused", -32000},
		{"key spelt with escapes", `{"id":5,"m\u0065thod":"Page.navigate","params":{"url":"file:///etc/passwd"}}`, "file: URLs are refused", -32000},
		{"duplicate method key", `{"id":6,"method":"Page.navigate","method":"Runtime.evaluate","params":{"url":"file:///"}}`, "duplicate key", -32700},
		{"duplicate url key", `{"id":6,"method":"Page.navigate","params":{"url":"http://x/","url":"file:///"}}`, "duplicate key", -32602},
		{"url not a string", `{"id":7,"method":"Page.navigate","params":{"url":1}}`, "url must be a string", -32602},
		{"Network.loadNetworkResource file", `{"id":8,"method":"Network.loadNetworkResource","params":{"frameId":"F","url":"file:///etc/passwd","options":{}}}`, "file: URLs are refused", -32000},
		{"Fetch.continueRequest to file", `{"id":8,"method":"Fetch.continueRequest","params":{"requestId":"r","url":"file:///etc/passwd"}}`, "file: URLs are refused", -32000},
		{"Fetch.continueRequest unchanged", `{"id":8,"method":"Fetch.continueRequest","params":{"requestId":"r"}}`, "", 0},
		{"setFileInputFiles inside", `{"id":9,"method":"DOM.setFileInputFiles","params":{"nodeId":1,"files":[` + string(inFile) + `]}}`, "", 0},
		{"setFileInputFiles outside", `{"id":9,"method":"DOM.setFileInputFiles","params":{"nodeId":1,"files":[` + string(inFile) + `,` + string(outFile) + `]}}`, "is outside this session's directory", -32000},
		{"setFileInputFiles /etc/passwd", `{"id":9,"method":"DOM.setFileInputFiles","params":{"nodeId":1,"files":["/etc/passwd"]}}`, "outside this session's directory", -32000},
		{"dispatchDragEvent with a file outside", `{"id":10,"method":"Input.dispatchDragEvent","params":{"type":"drop","x":1,"y":1,"data":{"items":[],"files":["/etc/passwd"],"dragOperationsMask":1}}}`, "outside this session's directory", -32000},
		{"dispatchDragEvent without files", `{"id":10,"method":"Input.dispatchDragEvent","params":{"type":"dragEnter","x":1,"y":1,"data":{"items":[],"dragOperationsMask":1}}}`, "", 0},
		{"Browser.setDownloadBehavior into the output dir", `{"id":11,"method":"Browser.setDownloadBehavior","params":{"behavior":"allow","downloadPath":` + string(outDir) + `}}`, "", 0},
		{"Browser.setDownloadBehavior to /tmp", `{"id":11,"method":"Browser.setDownloadBehavior","params":{"behavior":"allow","downloadPath":"/tmp"}}`, "downloads may only go to this session's directory", -32000},
		{"Page.setDownloadBehavior default", `{"id":11,"method":"Page.setDownloadBehavior","params":{"behavior":"default"}}`, "downloads may only go to this session's directory", -32000},
		{"Browser.setDownloadBehavior deny", `{"id":11,"method":"Browser.setDownloadBehavior","params":{"behavior":"deny"}}`, "", 0},
		{"sendMessageToTarget wrapping a file navigation", `{"id":12,"method":"Target.sendMessageToTarget","params":{"sessionId":"S","message":"{\"id\":1,\"method\":\"Page.navigate\",\"params\":{\"url\":\"file:///etc/passwd\"}}"}}`, "file: URLs are refused", -32000},
		{"sendMessageToTarget wrapping an evaluation", `{"id":12,"method":"Target.sendMessageToTarget","params":{"sessionId":"S","message":"{\"id\":1,\"method\":\"Runtime.evaluate\",\"params\":{\"expression\":\"1\"}}"}}`, "", 0},
		{"exposeDevToolsProtocol", `{"id":13,"method":"Target.exposeDevToolsProtocol","params":{"targetId":"T"}}`, "the DevTools frontend has powers", -32601},
		{"Extensions.loadUnpacked", `{"id":14,"method":"Extensions.loadUnpacked","params":{"path":"/tmp/x"}}`, "loading extensions from disk is refused", -32601},
		{"navigateToHistoryEntry unknown", `{"id":15,"method":"Page.navigateToHistoryEntry","params":{"entryId":7}}`, "read the entry with Page.getNavigationHistory", -32000},
		{"not an object", `[{"id":1,"method":"Page.navigate","params":{"url":"file:///"}}]`, "JSON objects", -32700},
		{"CBOR envelope", "\xd8\x5a\x00\x00\x00\x10", "JSON objects", -32700},
		{"invalid JSON naming a watched method", `{"id":1,"method":"Page.navigate",`, "invalid CDP message", -32700},
		{"trailing data", `{"id":1,"method":"Page.navigate","params":{"url":"http://x/"}}{"id":2}`, "data after the JSON object", -32700},
		{"PWA.install file", `{"id":16,"method":"PWA.install","params":{"manifestId":"m","installUrlOrBundleUrl":"file:///tmp/a.swbn"}}`, "installs apps on the server's machine", -32601},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reply := newInspector(g, nil, nil, "").client([]byte(tt.msg))
			if tt.want == "" {
				if reply != nil {
					t.Fatalf("refused: %s", reply)
				}
				return
			}
			if reply == nil {
				t.Fatalf("forwarded; want a refusal with %q", tt.want)
			}
			var a cdpAnswer
			if err := json.Unmarshal(reply, &a); err != nil || a.Error == nil {
				t.Fatalf("refusal is not a CDP error: %s", reply)
			}
			if a.Error.Code != tt.code || !strings.Contains(a.Error.Message, tt.want) {
				t.Fatalf("refusal %s; want code %d and %q", reply, tt.code, tt.want)
			}
			var sent struct {
				ID        *int64 `json:"id"`
				SessionID string `json:"sessionId"`
			}
			if json.Unmarshal([]byte(tt.msg), &sent) == nil && sent.ID != nil {
				if a.ID == nil || *a.ID != *sent.ID || a.SessionID != sent.SessionID {
					t.Fatalf("refusal %s does not echo id %d and sessionId %q", reply, *sent.ID, sent.SessionID)
				}
			}
		})
	}
}

// TestInspectHistoryEntries: Page.navigateToHistoryEntry passes for an entry
// the browser listed on this socket with an allowed URL, and is refused for
// a file: entry, an entry of another socket and an entry never listed.
func TestInspectHistoryEntries(t *testing.T) {
	g := newFileGuard(FilePolicy{})
	in := newInspector(g, nil, nil, "")
	if r := in.client([]byte(`{"id":41,"sessionId":"S","method":"Page.getNavigationHistory"}`)); r != nil {
		t.Fatalf("getNavigationHistory refused: %s", r)
	}
	// An answer to another id is not taken for the awaited one.
	in.upstream([]byte(`{"id":40,"sessionId":"S","result":{"currentIndex":0,"entries":[{"id":9,"url":"http://evil/"}]}}`))
	in.upstream([]byte(`{"id":41,"sessionId":"S","result":{"currentIndex":1,"entries":[` +
		`{"id":1,"url":"http://127.0.0.1/a","title":"a"},{"id":2,"url":"file:///etc/passwd","title":"p"}]}}`))
	nav := func(in *inspector, entry int) []byte {
		return in.client(fmt.Appendf(nil, `{"id":50,"sessionId":"S","method":"Page.navigateToHistoryEntry","params":{"entryId":%d}}`, entry))
	}
	if r := nav(in, 1); r != nil {
		t.Fatalf("an http entry was refused: %s", r)
	}
	if r := nav(in, 2); r == nil || !bytes.Contains(r, []byte("file: URLs are refused")) {
		t.Fatalf("a file: entry: %s", r)
	}
	if r := nav(in, 9); r == nil {
		t.Fatal("an entry from an answer nobody awaited was accepted")
	}
	if r := nav(newInspector(g, nil, nil, ""), 1); r == nil {
		t.Fatal("another socket's entry was accepted")
	}
}

// TestProxyFilePolicy: through the proxy, a refused message never reaches
// the browser and its sender gets the CDP error; others pass unchanged;
// /json/new with a file: URL (however escaped) is refused before the
// browser sees it; Unrestricted relays everything.
func TestProxyFilePolicy(t *testing.T) {
	fb := newFakeBrowser(t)
	for _, unrestricted := range []bool{false, true} {
		t.Run(fmt.Sprintf("unrestricted=%v", unrestricted), func(t *testing.T) {
			tp := newTestProxy(t, Config{Files: FilePolicy{Unrestricted: unrestricted}})
			discovery := tp.publish(t, fb)
			conn, _, err := dialWS(t, wsURL(discovery, "/devtools/page/ABC"), nil)
			if err != nil {
				t.Fatal(err)
			}
			file := []byte(`{"id":7,"sessionId":"S","method":"Page.navigate","params":{"url":"file:///etc/passwd"}}`)
			_, got := echoOnce(t, conn, websocket.MessageText, file)
			var a cdpAnswer
			_ = json.Unmarshal(got, &a)
			if unrestricted != bytes.Equal(got, file) || !unrestricted && (a.Error == nil || *a.ID != 7 || a.SessionID != "S") {
				t.Fatalf("Page.navigate file: answered %s", got)
			}
			ok := []byte(`{"id":8,"method":"Runtime.evaluate","params":{"expression":"1+1"}}`)
			if _, got := echoOnce(t, conn, websocket.MessageText, ok); !bytes.Equal(got, ok) {
				t.Fatalf("Runtime.evaluate answered %s", got)
			}

			c := httpClient(t)
			for _, q := range []string{"file:///etc/passwd", "file%3A%2F%2F%2Fetc%2Fpasswd", "%20FiLe:///etc/passwd", "view-source:file:///etc/passwd"} {
				before := fb.requests.Load()
				r := do(t, c, http.MethodPut, discovery+"/json/new?"+q, "", "")
				if unrestricted {
					if r.status != http.StatusOK {
						t.Fatalf("/json/new?%s unrestricted: %d %s", q, r.status, r.body)
					}
					continue
				}
				if r.status != http.StatusForbidden || errorCode(t, r.body) != "file_policy" || fb.requests.Load() != before {
					t.Fatalf("/json/new?%s: %d %s (browser requests %d → %d)", q, r.status, r.body, before, fb.requests.Load())
				}
			}
			r := do(t, c, http.MethodPut, discovery+"/json/new?"+url.QueryEscape("http://127.0.0.1/x"), "", "")
			if r.status != http.StatusOK {
				t.Fatalf("/json/new with an http URL: %d %s", r.status, r.body)
			}
		})
	}
}

// BenchmarkRelay measures one round trip through the proxy for a message the
// policy does not parse (Runtime.evaluate) and one it does (Page.navigate),
// with and without the policy.
func BenchmarkRelay(b *testing.B) {
	for _, unrestricted := range []bool{true, false} {
		for _, msg := range []string{
			`{"id":1,"method":"Runtime.evaluate","params":{"expression":"document.title","returnByValue":true}}`,
			`{"id":1,"method":"Page.navigate","params":{"url":"http://127.0.0.1:8080/page.html"}}`,
		} {
			name := fmt.Sprintf("unrestricted=%v/%s", unrestricted, strings.Split(msg, `"`)[5])
			b.Run(name, func(b *testing.B) {
				benchRelay(b, unrestricted, []byte(msg))
			})
		}
	}
}

func benchRelay(b *testing.B, unrestricted bool, msg []byte) {
	fb := newFakeBrowser(b)
	tp := newTestProxy(b, Config{Files: FilePolicy{Unrestricted: unrestricted}})
	discovery := tp.publish(b, fb)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, wsURL(discovery, "/devtools/page/ABC"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.CloseNow()
	b.ResetTimer()
	for range b.N {
		if err := conn.Write(ctx, websocket.MessageText, msg); err != nil {
			b.Fatal(err)
		}
		if _, _, err := conn.Read(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInspect is the policy's own cost per client message.
func BenchmarkInspect(b *testing.B) {
	in := newInspector(newFileGuard(FilePolicy{}), nil, nil, "")
	for _, msg := range []string{
		`{"id":1,"method":"Runtime.evaluate","params":{"expression":"document.title","returnByValue":true}}`,
		`{"id":1,"method":"Runtime.evaluate","params":{"expression":"\"a\\nb\"","returnByValue":true}}`,
		`{"id":1,"method":"Page.navigate","params":{"url":"http://127.0.0.1:8080/page.html"}}`,
	} {
		b.Run(msg[25:45], func(b *testing.B) {
			m := []byte(msg)
			for range b.N {
				if in.client(m) != nil {
					b.Fatal("refused")
				}
			}
		})
	}
}
