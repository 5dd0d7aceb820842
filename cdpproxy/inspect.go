package cdpproxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// The file policy reads client messages on their way to the browser. Only
// messages naming a watched method are parsed: a message whose bytes hold
// none of these names and no backslash (a JSON escape could spell a name
// otherwise) cannot call one, and is relayed untouched. A parsed message is
// refused if any object on the way to a checked value has a duplicate key,
// so the browser cannot read another value than the one checked.
var watchedMethods = [][]byte{
	[]byte("Target.createTarget"),
	[]byte("Page.navigate"), // also Page.navigateToHistoryEntry
	[]byte("Page.getNavigationHistory"),
	[]byte("Network.loadNetworkResource"),
	[]byte("Fetch.continueRequest"),
	[]byte("Network.continueInterceptedRequest"),
	[]byte("PWA.install"),
	[]byte("DOM.setFileInputFiles"),
	[]byte("Input.dispatchDragEvent"),
	[]byte("setDownloadBehavior"), // Browser. and Page.
	[]byte("Target.sendMessageToTarget"),
	[]byte("Target.exposeDevToolsProtocol"),
	[]byte("Extensions.loadUnpacked"),
}

// CDP error codes of refusals (JSON-RPC's).
const (
	cdpParseError    = -32700
	cdpInvalidParams = -32602
	cdpServerError   = -32000
)

// maxNesting bounds Target.sendMessageToTarget inside itself.
const maxNesting = 4

// maxHistoryEntries bounds the navigation entries one socket remembers.
const maxHistoryEntries = 4096

// inspector applies a fileGuard to one relayed WebSocket. It remembers the
// navigation entries the browser listed on this socket, so that
// Page.navigateToHistoryEntry can be checked against the entry's URL.
type inspector struct {
	guard *fileGuard

	npending atomic.Int32 // Page.getNavigationHistory answers awaited
	mu       sync.Mutex
	pending  map[string]struct{} // sessionId "\x00" id
	entries  map[int64]string    // navigation entry id → URL
}

func newInspector(g *fileGuard) *inspector {
	return &inspector{guard: g, pending: make(map[string]struct{}), entries: make(map[int64]string)}
}

// refusal is a CDP error answer to a message that is not forwarded.
type refusal struct {
	code    int
	message string
}

// client inspects one client message. It returns nil to forward it, or the
// CDP error answer to send back to the client instead.
func (in *inspector) client(msg []byte) []byte {
	rest := bytes.TrimLeft(msg, " \t\r\n")
	if len(rest) == 0 || rest[0] != '{' || !utf8.Valid(msg) {
		// Chromium also takes CBOR-encoded messages; this proxy relays JSON objects only.
		return encodeRefusal(nil, "", refusal{cdpParseError, "this CDP proxy relays JSON objects in UTF-8 only"})
	}
	if !mayWatch(msg) {
		return nil
	}
	top, err := decodeObject(msg)
	if err != nil {
		// Best effort, only to let the client match the answer to its call.
		var ids struct {
			ID        json.RawMessage `json:"id"`
			SessionID string          `json:"sessionId"`
		}
		_ = json.Unmarshal(msg, &ids)
		return encodeRefusal(ids.ID, ids.SessionID, refusal{cdpParseError, "invalid CDP message: " + err.Error()})
	}
	var sessionID string
	_ = json.Unmarshal(top["sessionId"], &sessionID)
	if r := in.check(top, sessionID, 0); r != nil {
		return encodeRefusal(top["id"], sessionID, *r)
	}
	return nil
}

// mayWatch reports whether msg could call a watched method.
func mayWatch(msg []byte) bool {
	if bytes.IndexByte(msg, '\\') >= 0 {
		return true
	}
	for _, m := range watchedMethods {
		if bytes.Contains(msg, m) {
			return true
		}
	}
	return false
}

// check applies the policy to one decoded message.
func (in *inspector) check(top map[string]json.RawMessage, sessionID string, depth int) *refusal {
	var method string
	if json.Unmarshal(top["method"], &method) != nil {
		return nil // not a command: the browser answers it
	}
	var params map[string]json.RawMessage
	if raw, ok := top["params"]; ok && string(raw) != "null" {
		var err error
		if params, err = decodeObject(raw); err != nil {
			return &refusal{cdpInvalidParams, method + ": invalid params: " + err.Error()}
		}
	}
	str := func(key string) (string, *refusal) {
		var s string
		if raw, ok := params[key]; ok {
			if err := json.Unmarshal(raw, &s); err != nil {
				return "", &refusal{cdpInvalidParams, fmt.Sprintf("%s: %s must be a string", method, key)}
			}
		}
		return s, nil
	}
	policy := func(err error) *refusal {
		if err == nil {
			return nil
		}
		return &refusal{cdpServerError, method + ": " + err.Error()}
	}
	switch method {
	case "Target.createTarget", "Page.navigate", "Network.loadNetworkResource",
		"Fetch.continueRequest", "Network.continueInterceptedRequest":
		u, r := str("url")
		if r != nil {
			return r
		}
		return policy(checkURL(u))
	case "PWA.install":
		u, r := str("installUrlOrBundleUrl")
		if r != nil {
			return r
		}
		return policy(checkURL(u))
	case "Page.getNavigationHistory":
		if depth == 0 {
			in.expect(sessionID, top["id"])
		}
		return nil
	case "Page.navigateToHistoryEntry":
		var id int64
		if json.Unmarshal(params["entryId"], &id) != nil {
			return &refusal{cdpInvalidParams, method + ": entryId must be an integer"}
		}
		in.mu.Lock()
		u, ok := in.entries[id]
		in.mu.Unlock()
		if !ok {
			return policy(errors.New("this server's file policy checks the entry's URL: read the entry with Page.getNavigationHistory " +
				"on this connection first"))
		}
		return policy(checkURL(u))
	case "DOM.setFileInputFiles":
		return in.checkFiles(method, params["files"])
	case "Input.dispatchDragEvent":
		raw, ok := params["data"]
		if !ok {
			return nil
		}
		data, err := decodeObject(raw)
		if err != nil {
			return &refusal{cdpInvalidParams, method + ": invalid data: " + err.Error()}
		}
		return in.checkFiles(method, data["files"])
	case "Browser.setDownloadBehavior", "Page.setDownloadBehavior":
		b, r := str("behavior")
		if r != nil {
			return r
		}
		p, r := str("downloadPath")
		if r != nil {
			return r
		}
		return policy(in.guard.checkDownload(b, p))
	case "Target.sendMessageToTarget":
		inner, r := str("message")
		if r != nil {
			return r
		}
		if depth >= maxNesting {
			return &refusal{cdpInvalidParams, method + ": messages nested too deep"}
		}
		innerTop, err := decodeObject([]byte(inner))
		if err != nil {
			return &refusal{cdpInvalidParams, method + ": invalid message: " + err.Error()}
		}
		return in.check(innerTop, "", depth+1)
	case "Target.exposeDevToolsProtocol":
		return policy(errors.New("a page with the DevTools protocol could go around this server's file policy; " + policyHint))
	case "Extensions.loadUnpacked":
		return policy(errors.New("loading extensions from disk is refused by this server's file policy; " + policyHint))
	}
	return nil
}

// checkFiles refuses a files list with a path outside the input roots.
func (in *inspector) checkFiles(method string, raw json.RawMessage) *refusal {
	if raw == nil {
		return nil
	}
	var files []string
	if err := json.Unmarshal(raw, &files); err != nil {
		return &refusal{cdpInvalidParams, method + ": files must be a list of paths"}
	}
	for _, f := range files {
		if err := in.guard.checkInputFile(f); err != nil {
			return &refusal{cdpServerError, method + ": " + err.Error()}
		}
	}
	return nil
}

// expect records a Page.getNavigationHistory request whose answer lists
// entries for later Page.navigateToHistoryEntry checks.
func (in *inspector) expect(sessionID string, id json.RawMessage) {
	if id == nil {
		return
	}
	in.mu.Lock()
	if len(in.pending) >= 64 { // answers that never came (errors): forget them
		clear(in.pending)
	}
	in.pending[sessionID+"\x00"+string(bytes.TrimSpace(id))] = struct{}{}
	in.npending.Store(int32(len(in.pending)))
	in.mu.Unlock()
}

// upstream observes one browser message: the answers to the
// Page.getNavigationHistory requests recorded by expect.
func (in *inspector) upstream(msg []byte) {
	if in.npending.Load() == 0 || !bytes.Contains(msg, []byte(`"entries"`)) {
		return
	}
	var ans struct {
		ID        json.RawMessage `json:"id"`
		SessionID string          `json:"sessionId"`
		Result    struct {
			Entries []struct {
				ID  int64  `json:"id"`
				URL string `json:"url"`
			} `json:"entries"`
		} `json:"result"`
	}
	if json.Unmarshal(msg, &ans) != nil || ans.ID == nil {
		return
	}
	key := ans.SessionID + "\x00" + string(bytes.TrimSpace(ans.ID))
	in.mu.Lock()
	defer in.mu.Unlock()
	if _, ok := in.pending[key]; !ok {
		return
	}
	delete(in.pending, key)
	in.npending.Store(int32(len(in.pending)))
	if len(in.entries)+len(ans.Result.Entries) > maxHistoryEntries {
		clear(in.entries)
	}
	for _, e := range ans.Result.Entries {
		in.entries[e.ID] = e.URL
	}
}

// decodeObject decodes a JSON object into its members, refusing duplicate
// keys (after unescaping) and anything but one object.
func decodeObject(b []byte) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	m := make(map[string]json.RawMessage)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		if _, dup := m[key]; dup {
			return nil, fmt.Errorf("duplicate key %s", quote(key))
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		m[key] = v
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON object")
	}
	return m, nil
}

// encodeRefusal is the CDP error answer {"id":N,"error":{...},"sessionId":S}.
func encodeRefusal(id json.RawMessage, sessionID string, r refusal) []byte {
	type cdpError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	out := struct {
		ID        json.RawMessage `json:"id,omitempty"`
		Error     cdpError        `json:"error"`
		SessionID string          `json:"sessionId,omitempty"`
	}{Error: cdpError{r.code, r.message}, SessionID: sessionID}
	if id != nil && isJSONNumber(id) {
		out.ID = id
	}
	b, _ := json.Marshal(out)
	return b
}

func isJSONNumber(b json.RawMessage) bool {
	s := strings.TrimSpace(string(b))
	var n json.Number
	return s != "" && json.Unmarshal([]byte(s), &n) == nil
}
