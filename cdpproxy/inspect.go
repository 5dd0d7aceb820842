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

// The inspector applies the proxy's rules to one relayed WebSocket. Every
// client command is parsed: it is forwarded only if its method is on the
// allowlist (allowlist.go) and its checked parameters pass — URLs, target
// ids and sessions always (targets.go), file paths and download directories
// under the file policy (filepolicy.go). Otherwise its sender gets a CDP
// error instead. A parsed message is refused if any object on the way to a
// checked value has a duplicate key, so the browser cannot read another
// value than the one checked. Browser messages that list or announce targets
// are filtered on their way back, so privileged targets and their sessions
// stay hidden.

// CDP error codes of refusals (JSON-RPC's).
const (
	cdpParseError     = -32700
	cdpInvalidRequest = -32600
	cdpMethodNotFound = -32601
	cdpInvalidParams  = -32602
	cdpServerError    = -32000
)

// maxNesting bounds Target.sendMessageToTarget (and the browser's
// Target.receivedMessageFromTarget) inside itself.
const maxNesting = 4

// maxHistoryEntries bounds the navigation entries one socket remembers.
const maxHistoryEntries = 4096

// maxSessions bounds the sessions one socket remembers the targets of.
const maxSessions = 4096

// lookupFunc reads the browser's target list into the generation's table.
// Its error is for the log only.
type lookupFunc func() error

// inspector applies the rules to one relayed WebSocket. It remembers the
// navigation entries the browser listed on this socket, so that
// Page.navigateToHistoryEntry can be checked against the entry's URL, and
// the sessions the browser attached on it, so that those of privileged
// targets stay hidden.
type inspector struct {
	guard   *fileGuard                       // nil: no file policy (--allow-unrestricted-file-access)
	targets *targetTable                     // the generation's
	lookup  lookupFunc                       // nil: unknown targets are refused without a lookup
	self    string                           // a page socket's target; "" for the browser socket
	logf    func(format string, args ...any) // nil: no log

	npending atomic.Int32 // Page.getNavigationHistory answers awaited
	nhidden  atomic.Int32 // len(hidden)
	mu       sync.Mutex
	pending  map[string]struct{} // sessionId "\x00" id
	entries  map[int64]string    // navigation entry id → URL
	sessions map[string]string   // sessionId → targetId (Target.attachedToTarget)
	hidden   map[string]struct{} // sessions of privileged targets
}

func newInspector(g *fileGuard, targets *targetTable, lookup lookupFunc, self string) *inspector {
	if targets == nil {
		targets = newTargetTable()
	}
	return &inspector{guard: g, targets: targets, lookup: lookup, self: self,
		pending: make(map[string]struct{}), entries: make(map[int64]string),
		sessions: make(map[string]string), hidden: make(map[string]struct{})}
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
	if raw, ok := top["sessionId"]; ok && json.Unmarshal(raw, &sessionID) != nil {
		return encodeRefusal(top["id"], "", refusal{cdpInvalidRequest, "sessionId must be a string"})
	}
	if r := in.check(top, sessionID, 0); r != nil {
		if in.logf != nil {
			var method string
			_ = json.Unmarshal(top["method"], &method)
			in.logf("refused %s (CDP error %d)", quote(method), r.code) // not the message: it may quote a URL
		}
		return encodeRefusal(top["id"], sessionID, *r)
	}
	return nil
}

// check applies the rules to one decoded command, sent on sessionID.
func (in *inspector) check(top map[string]json.RawMessage, sessionID string, depth int) *refusal {
	raw, ok := top["method"]
	if !ok {
		return nil // not a command: the browser answers it with an error
	}
	var method string
	if json.Unmarshal(raw, &method) != nil {
		return &refusal{cdpInvalidRequest, "method must be a string"}
	}
	if depth == 0 && in.self != "" {
		if priv, _ := in.targets.lookup(in.self); priv {
			return &refusal{cdpServerError, method + ": this socket's target is a DevTools or browser page now: " + errPrivileged.Error()}
		}
	}
	if sessionID != "" {
		if r := in.checkSession(method, sessionID); r != nil {
			return r
		}
	}
	if r := methodRefusal(method); r != nil {
		return r
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
		return policy(checkNavigation(in.guard, u))
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
			return policy(errors.New("this CDP proxy checks the entry's URL: read the entry with Page.getNavigationHistory " +
				"on this connection first"))
		}
		return policy(checkNavigation(in.guard, u))
	case "DOM.setFileInputFiles":
		return in.checkFiles(method, params["files"])
	case "Input.dispatchDragEvent":
		raw, ok := params["data"]
		if !ok || in.guard == nil {
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
		if r != nil || in.guard == nil {
			return r
		}
		return policy(in.guard.checkDownload(b, p))
	case "Tracing.start":
		b, r := str("tracingBackend")
		if r == nil && b == "system" {
			r = policy(errors.New(`the "system" tracing backend traces the server's machine; use "auto" or "chrome"`))
		}
		return r
	case "Target.attachToTarget", "Target.activateTarget", "Target.closeTarget", "Target.autoAttachRelated":
		id, r := str("targetId")
		if r != nil {
			return r
		}
		return in.reach(method, id)
	case "Target.getTargetInfo":
		id, r := str("targetId")
		if r != nil {
			return r
		}
		return in.reach(method, id) // without one: the session's own target, checked above
	case "Target.sendMessageToTarget":
		sid, r := str("sessionId")
		if r != nil {
			return r
		}
		if sid != "" {
			if r := in.checkSession(method, sid); r != nil {
				return r
			}
		}
		tid, r := str("targetId")
		if r != nil {
			return r
		}
		if r := in.reach(method, tid); r != nil {
			return r
		}
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
		var innerSession string
		if raw, ok := innerTop["sessionId"]; ok && json.Unmarshal(raw, &innerSession) != nil {
			return &refusal{cdpInvalidParams, method + ": the message's sessionId must be a string"}
		}
		return in.check(innerTop, innerSession, depth+1)
	}
	return nil
}

// checkSession refuses a command on a session of a privileged target.
func (in *inspector) checkSession(method, sessionID string) *refusal {
	in.mu.Lock()
	_, hidden := in.hidden[sessionID]
	target := in.sessions[sessionID]
	in.mu.Unlock()
	if !hidden && target != "" {
		hidden, _ = in.targets.lookup(target)
	}
	if hidden {
		return &refusal{cdpServerError, fmt.Sprintf("%s: session %s: %v", method, quote(sessionID), errPrivileged)}
	}
	return nil
}

// reach refuses a command naming a target that is privileged, or that
// neither this proxy nor the browser's target list knows (it could not be
// checked). An empty id is the browser's to answer.
func (in *inspector) reach(method, id string) *refusal {
	if id == "" {
		return nil
	}
	priv, known := in.targets.lookup(id)
	if !known && in.lookup != nil {
		if err := in.lookup(); err != nil {
			if in.logf != nil {
				in.logf("%v", err)
			}
			return &refusal{cdpServerError, fmt.Sprintf("%s: the browser could not be reached to check target %s", method, quote(id))}
		}
		priv, known = in.targets.lookup(id)
	}
	switch {
	case !known:
		return &refusal{cdpServerError, fmt.Sprintf("%s: target %s is not known to this CDP proxy: "+
			"find targets with Target.getTargets or Target.setDiscoverTargets first", method, quote(id))}
	case priv:
		return &refusal{cdpServerError, fmt.Sprintf("%s: target %s: %v", method, quote(id), errPrivileged)}
	}
	return nil
}

// checkFiles refuses a files list with a path outside the input roots.
func (in *inspector) checkFiles(method string, raw json.RawMessage) *refusal {
	if raw == nil || in.guard == nil {
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

// upstream inspects one browser message on its way to the client. It
// returns the message to forward — msg itself, or msg without privileged
// targets — or nil to drop it.
func (in *inspector) upstream(msg []byte) []byte {
	in.history(msg)
	if !bytes.Contains(msg, []byte("Target.")) && !bytes.Contains(msg, []byte("targetInfo")) && !in.mentionsHidden(msg) {
		return msg
	}
	out, keep := in.filter(msg, 0)
	if !keep {
		return nil
	}
	return out
}

// mentionsHidden reports whether msg may belong to a hidden session.
func (in *inspector) mentionsHidden(msg []byte) bool {
	if in.nhidden.Load() == 0 {
		return false
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	for sid := range in.hidden {
		if bytes.Contains(msg, []byte(sid)) {
			return true
		}
	}
	return false
}

// filter applies the target rules to one browser message (or one carried
// by Target.receivedMessageFromTarget at depth > 0): events about
// privileged targets and messages of their sessions are dropped, target
// lists lose their privileged entries, and Target.getTargetInfo of a
// privileged target becomes an error. What it cannot read is dropped.
func (in *inspector) filter(msg []byte, depth int) ([]byte, bool) {
	top, err := decodeObject(msg)
	if err != nil {
		return nil, false
	}
	var sessionID string
	_ = json.Unmarshal(top["sessionId"], &sessionID)
	if sessionID != "" && in.isHidden(sessionID) {
		return nil, false
	}
	var method string
	_ = json.Unmarshal(top["method"], &method)
	var params map[string]json.RawMessage
	if raw, ok := top["params"]; ok && strings.HasPrefix(method, "Target.") {
		if params, err = decodeObject(raw); err != nil {
			return nil, false
		}
	}
	str := func(key string) string {
		var s string
		_ = json.Unmarshal(params[key], &s)
		return s
	}
	switch method {
	case "Target.targetCreated", "Target.targetInfoChanged":
		var ti targetInfo
		_ = json.Unmarshal(params["targetInfo"], &ti)
		if in.targets.observeInfo(params["targetInfo"]) {
			in.hideSessionsOf(ti.TargetID)
			return nil, false
		}
	case "Target.attachedToTarget":
		var ti targetInfo
		_ = json.Unmarshal(params["targetInfo"], &ti)
		priv := in.targets.observeInfo(params["targetInfo"])
		in.attached(str("sessionId"), ti.TargetID, priv)
		if priv {
			return nil, false
		}
	case "Target.detachedFromTarget":
		hidden := in.detached(str("sessionId"))
		if priv, _ := in.targets.lookup(str("targetId")); hidden || priv {
			return nil, false
		}
	case "Target.targetDestroyed", "Target.targetCrashed":
		id := str("targetId")
		priv, _ := in.targets.lookup(id)
		if method == "Target.targetDestroyed" {
			in.targets.forget(id)
		}
		if priv {
			return nil, false
		}
	case "Target.receivedMessageFromTarget":
		if in.isHidden(str("sessionId")) || depth >= maxNesting {
			return nil, false
		}
		if priv, _ := in.targets.lookup(str("targetId")); priv {
			return nil, false
		}
		inner := str("message")
		out, keep := in.filter([]byte(inner), depth+1)
		if !keep {
			return nil, false
		}
		if string(out) != inner {
			params["message"], _ = json.Marshal(string(out))
			top["params"], _ = json.Marshal(params)
			return reencode(top)
		}
	}
	raw, ok := top["result"]
	if !ok || method != "" {
		return msg, true
	}
	result, err := decodeObject(raw)
	if err != nil {
		return msg, true // not an object: no target list in it
	}
	if infos, ok := result["targetInfos"]; ok { // Target.getTargets
		kept, dropped, err := in.targets.filterList(infos)
		if err != nil {
			return nil, false
		}
		if dropped == 0 {
			return msg, true
		}
		result["targetInfos"] = kept
		top["result"], _ = json.Marshal(result)
		return reencode(top)
	}
	if info, ok := result["targetInfo"]; ok && in.targets.observeInfo(info) { // Target.getTargetInfo
		return encodeRefusal(top["id"], sessionID, refusal{cdpServerError, "Target.getTargetInfo: " + errPrivileged.Error()}), true
	}
	return msg, true
}

func reencode(top map[string]json.RawMessage) ([]byte, bool) {
	b, err := json.Marshal(top)
	return b, err == nil
}

// attached records a session the browser attached on this socket.
func (in *inspector) attached(sessionID, targetID string, privileged bool) {
	if sessionID == "" {
		return
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if privileged {
		in.hidden[sessionID] = struct{}{}
		in.nhidden.Store(int32(len(in.hidden)))
		return
	}
	if len(in.sessions) >= maxSessions {
		clear(in.sessions)
	}
	in.sessions[sessionID] = targetID
}

// detached forgets a session and reports whether it was hidden.
func (in *inspector) detached(sessionID string) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	_, hidden := in.hidden[sessionID]
	delete(in.hidden, sessionID)
	delete(in.sessions, sessionID)
	in.nhidden.Store(int32(len(in.hidden)))
	return hidden
}

// hideSessionsOf hides this socket's sessions of a target that has become
// privileged.
func (in *inspector) hideSessionsOf(targetID string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for sid, tid := range in.sessions {
		if tid == targetID {
			in.hidden[sid] = struct{}{}
			delete(in.sessions, sid)
		}
	}
	in.nhidden.Store(int32(len(in.hidden)))
}

func (in *inspector) isHidden(sessionID string) bool {
	if sessionID == "" || in.nhidden.Load() == 0 {
		return false
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	_, ok := in.hidden[sessionID]
	return ok
}

// history observes the answers to the Page.getNavigationHistory requests
// recorded by expect.
func (in *inspector) history(msg []byte) {
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
