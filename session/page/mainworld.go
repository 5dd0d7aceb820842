// The agent's scripts in the page's own world, without Playwright's
// fingerprints, and the hand-off of elements between Playwright's locators
// and the tab's CDP session.

package page

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mxschmitt/playwright-go"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/clip"
)

// The agent's function (browser_evaluate) is meant to run in the page's
// world, where its scripts are; it runs there over the tab's own CDP
// session (Runtime.evaluate, Runtime.callFunctionOn), not through
// Playwright's evaluate, whose UtilityScript frames a page can read in the
// stack of any call the function makes into the page (new Error().stack in
// a wrapped DOM method). No sourceURL is given: the frames of the agent's
// code read "<anonymous>", as code typed into DevTools' console does, and
// nothing is added to the page's globals.
//
// The value comes back as Playwright returns it (CDP's deep serialization,
// decoded in Go with no script of ours in the page): numbers, strings,
// booleans, arrays and objects as JSON; undefined, functions and symbols
// as null; NaN and ±Infinity as such; a Date as its ISO string; a DOM node
// as "ref: <Node>" ("ref: <Document>", "ref: <Window>").

// evalGroups numbers the CDP object groups of evaluations, each released
// when its call ends.
var evalGroups atomic.Uint64

// functionPrefix matches a function declaration, which a script would take
// as a statement: it is wrapped in parentheses to be an expression, as
// Playwright does.
var functionPrefix = regexp.MustCompile(`^(async)?\s*function(\s|\()`)

// evalInMain runs the agent's fn in the main world of the tab's main frame
// (el nil) or of the element's frame, called with the element. A function
// text is called; any other expression is the value.
func (t *Tab) evalInMain(ctx context.Context, op, fn string, el *Element) (any, error) {
	s, err := t.cdpSession(ctx)
	if err != nil {
		return nil, err
	}
	fn = strings.TrimSpace(fn)
	if functionPrefix.MatchString(fn) {
		fn = "(" + fn + ")"
	}
	group := fmt.Sprintf("cloakmcp-%d", evalGroups.Add(1))
	defer t.releaseGroup(s, group)
	send := func(method string, params map[string]any) (map[string]any, error) {
		params["objectGroup"] = group
		res, err := call(ctx, t.c, op, stopOn{modal: t}, func() (any, error) { return s.Send(method, params) })
		if err != nil {
			return nil, err
		}
		m, _ := res.(map[string]any)
		if ex, ok := m["exceptionDetails"].(map[string]any); ok {
			return nil, &PageError{Op: op, Msg: clip.FirstLine(fmt.Sprint(exceptionText(ex)))}
		}
		r, _ := m["result"].(map[string]any)
		return r, nil
	}
	deep := map[string]any{"serialization": "deep", "additionalParameters": map[string]any{"maxNodeDepth": 0, "includeShadowTree": "none"}}
	if el != nil {
		obj, err := el.mainObject(ctx, s, group)
		if err != nil {
			return nil, err
		}
		// Runtime.callFunctionOn, as Playwright's evaluate: code it runs may
		// eval whatever the page's CSP says (Runtime.evaluate can keep to
		// the CSP, but passes no argument).
		arg := map[string]any{"objectId": obj}
		r, err := send("Runtime.callFunctionOn", map[string]any{
			"functionDeclaration": fn, "objectId": obj, "arguments": []any{arg},
			"awaitPromise": true, "serializationOptions": deep,
		})
		if err != nil {
			if strings.Contains(err.Error(), "does not evaluate to a function") {
				return nil, fmt.Errorf("with target, function must be a function of the element, e.g. (el) => el.textContent")
			}
			return nil, err
		}
		return remoteValue(r), nil
	}
	// As Playwright's evaluate of a string: the text is evaluated; a
	// function it gives is called. Runtime.evaluate keeps to the page's
	// CSP (allowUnsafeEvalBlockedByCSP false): the agent's code can no
	// more eval than the page's own, as without DevTools. A function
	// literal is called in a second evaluation of the same text (making
	// a function has no side effects).
	opts := func(expr string) map[string]any {
		return map[string]any{"expression": expr, "awaitPromise": true, "serializationOptions": deep, "allowUnsafeEvalBlockedByCSP": false}
	}
	r, err := send("Runtime.evaluate", opts(fn))
	if err != nil {
		return nil, err
	}
	if r["type"] != "function" {
		return remoteValue(r), nil
	}
	if functionLiteral.MatchString(fn) {
		r, err = send("Runtime.evaluate", opts("(\n"+fn+"\n)()"))
		if err != nil {
			return nil, err
		}
		return remoteValue(r), nil
	}
	// An expression that gives a function (rare): call what it gave.
	id, _ := r["objectId"].(string)
	if id == "" {
		return nil, fmt.Errorf("%s: the function cannot be called", op)
	}
	r, err = send("Runtime.callFunctionOn", map[string]any{
		"functionDeclaration": "function() { return this() }", "objectId": id, "awaitPromise": true, "serializationOptions": deep,
	})
	if err != nil {
		return nil, err
	}
	return remoteValue(r), nil
}

// functionLiteral matches the text of a function expression: an arrow
// function or a parenthesized function (functionPrefix's).
var functionLiteral = regexp.MustCompile(`^(async\s*)?(\(|[A-Za-z_$][\w$]*\s*=>)`)

// releaseGroup releases the objects of an evaluation, in the background
// (the page may still be busy).
func (t *Tab) releaseGroup(s playwright.CDPSession, group string) {
	t.c.Go(func() { _, _ = s.Send("Runtime.releaseObjectGroup", map[string]any{"objectGroup": group}) })
}

// remoteValue is the Go value of a CDP RemoteObject: its deep serialization
// when there is one, else its value.
func remoteValue(r map[string]any) any {
	if d, ok := r["deepSerializedValue"].(map[string]any); ok {
		return deepValue(d, 0)
	}
	if u, ok := r["unserializableValue"].(string); ok {
		return numberValue(u)
	}
	switch r["subtype"] {
	case "node":
		return "ref: <Node>"
	}
	return r["value"]
}

// maxDeepNesting bounds the decoding of a deeply nested value.
const maxDeepNesting = 1000

// deepValue decodes one CDP DeepSerializedValue.
func deepValue(d map[string]any, depth int) any {
	if depth > maxDeepNesting {
		return nil
	}
	v, has := d["value"]
	switch d["type"] {
	case "string", "boolean":
		return v
	case "number":
		if s, ok := v.(string); ok {
			return numberValue(s)
		}
		return v
	case "bigint":
		if s, ok := v.(string); ok {
			return json.Number(s)
		}
	case "date":
		if s, ok := v.(string); ok {
			if tm, err := time.Parse(time.RFC3339Nano, s); err == nil {
				return tm.UTC().Format("2006-01-02T15:04:05.000Z")
			}
			return s
		}
	case "regexp":
		return map[string]any{}
	case "array", "set":
		l, _ := v.([]any)
		if !has {
			return nil // seen before (a cycle) or past the depth
		}
		out := make([]any, 0, len(l))
		for _, e := range l {
			m, _ := e.(map[string]any)
			out = append(out, deepValue(m, depth+1))
		}
		return out
	case "object", "map":
		l, _ := v.([]any)
		if !has {
			return nil
		}
		out := make(map[string]any, len(l))
		for _, e := range l {
			kv, _ := e.([]any)
			if len(kv) != 2 {
				continue
			}
			var key string
			switch k := kv[0].(type) {
			case string:
				key = k
			case map[string]any:
				key = fmt.Sprint(deepValue(k, depth+1))
			}
			m, _ := kv[1].(map[string]any)
			val := deepValue(m, depth+1)
			if val == nil {
				if m != nil && m["type"] == "undefined" || m["type"] == "function" || m["type"] == "symbol" {
					continue // JSON drops them, as Playwright's value does
				}
			}
			out[key] = val
		}
		return out
	case "node":
		if vm, ok := v.(map[string]any); ok && vm["nodeType"] == float64(9) {
			return "ref: <Document>"
		}
		return "ref: <Node>"
	case "window":
		return "ref: <Window>"
	case "error":
		return map[string]any{}
	}
	return nil // undefined, null, function, symbol, promise, …
}

// numberValue is a number CDP could not put in JSON.
func numberValue(s string) any {
	switch s {
	case "NaN":
		return math.NaN()
	case "Infinity":
		return math.Inf(1)
	case "-Infinity":
		return math.Inf(-1)
	case "-0":
		return math.Copysign(0, -1)
	}
	if strings.HasSuffix(s, "n") {
		return json.Number(strings.TrimSuffix(s, "n"))
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return f
	}
	return s
}

// The hand-off. A Playwright locator (an AI ref, a selector) is resolved
// by Playwright's own engines in its utility world, an isolated world the
// page cannot see; a CDP node is what the tab's session works with. A
// selector engine of ours, registered as a content script (it runs in that
// utility world too), crosses between the two there: "take:K" keeps the
// element it is queried under as the utility world's global K, which the
// tab's session then reads (its backend node id); "give:K" matches the
// node the session put there. Nothing is written to the page's DOM or its
// world.

// handoffEngine names the selector engine.
const handoffEngine = "cloakmcp-handoff"

const handoffJS = `{
	queryAll(root, body) {
		const i = body.indexOf(':');
		const op = body.slice(0, i), key = body.slice(i + 1);
		if (op === 'take') {
			globalThis[key] = root;
			return [];
		}
		const el = globalThis[key];
		for (let n = el; n; n = n.parentNode || n.host) {
			if (n === root) return [el];
		}
		return [];
	},
	query(root, body) { return this.queryAll(root, body)[0] || null; }
}`

// registered keeps the Playwright instances the engine is registered with.
var registered sync.Map

// RegisterEngines registers the hand-off engine with pw's contexts (once
// per Playwright instance; contexts made after get it too). Until it is,
// an element is reached through Playwright's evaluate.
func RegisterEngines(pw *playwright.Playwright) {
	if pw == nil || pw.Selectors == nil {
		return
	}
	if _, loaded := registered.LoadOrStore(pw, true); loaded {
		return
	}
	src := handoffJS
	if err := pw.Selectors.Register(handoffEngine, playwright.Script{Content: &src}, playwright.SelectorsRegisterOptions{ContentScript: playwright.Bool(true)}); err != nil && !strings.Contains(err.Error(), "already registered") {
		registered.Delete(pw)
	}
}

// errNoHandoff means the hand-off could not reach the element (a frame of
// another process, or no engine).
var errNoHandoff = errors.New("the element cannot be handed over")

// handoffKey is a fresh global name for one hand-off.
func handoffKey() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("_%x", b)
}

// utilityContexts lists the execution contexts of Playwright's utility
// worlds in the tab's frames (those of this renderer). The session's
// Runtime domain is enabled only while they are read: it reports the
// contexts there are, then is disabled.
func (t *Tab) utilityContexts(ctx context.Context, s playwright.CDPSession) ([]int, error) {
	t.worldsMu.Lock()
	defer t.worldsMu.Unlock()
	t.mu.Lock()
	if !t.ctxHeard {
		t.ctxHeard = true
		s.On("Runtime.executionContextCreated", func(m map[string]any) {
			c, _ := m["context"].(map[string]any)
			name, _ := c["name"].(string)
			id, _ := c["id"].(float64)
			if strings.HasPrefix(name, "__playwright_utility_world_") && id != 0 {
				t.mu.Lock()
				if t.utilCtx != nil {
					t.utilCtx = append(t.utilCtx, int(id))
				}
				t.mu.Unlock()
			}
		})
	}
	t.utilCtx = []int{}
	t.mu.Unlock()
	_, err := call(ctx, t.c, "list the page's worlds", stopOn{modal: t}, func() (any, error) {
		if _, err := s.Send("Runtime.enable", map[string]any{}); err != nil {
			return nil, err
		}
		return s.Send("Runtime.disable", map[string]any{})
	})
	t.mu.Lock()
	ids := t.utilCtx
	t.utilCtx = nil
	t.mu.Unlock()
	return ids, err
}

// backendNode hands the element over: its backend node id, read in
// Playwright's utility world of its frame.
func (e *Element) backendNode(ctx context.Context, s playwright.CDPSession) (int, error) {
	t := e.tab
	key := handoffKey()
	n, err := t.count(ctx, e.loc.Locator(handoffEngine+"=take:"+key))
	if err != nil {
		if strings.Contains(err.Error(), "Unknown engine") {
			return 0, errNoHandoff
		}
		return 0, err
	}
	_ = n // the engine matches nothing; it was queried under the element
	ids, err := t.utilityContexts(ctx, s)
	if err != nil {
		return 0, err
	}
	for _, cid := range ids {
		res, err := call(ctx, t.c, "hand over "+e.Target, stopOn{modal: t}, func() (any, error) {
			return s.Send("Runtime.evaluate", map[string]any{"expression": "globalThis." + key, "contextId": cid})
		})
		if err != nil {
			continue // a context that went
		}
		r, _ := res.(map[string]any)["result"].(map[string]any)
		id, _ := r["objectId"].(string)
		if id == "" {
			continue
		}
		res, err = call(ctx, t.c, "hand over "+e.Target, stopOn{modal: t}, func() (any, error) {
			return s.Send("DOM.describeNode", map[string]any{"objectId": id})
		})
		t.c.Go(func() {
			_, _ = s.Send("Runtime.evaluate", map[string]any{"expression": "delete globalThis." + key, "contextId": cid})
			_, _ = s.Send("Runtime.releaseObject", map[string]any{"objectId": id})
		})
		if err != nil {
			return 0, err
		}
		node, _ := res.(map[string]any)["node"].(map[string]any)
		if b, _ := node["backendNodeId"].(float64); b != 0 {
			return int(b), nil
		}
	}
	return 0, errNoHandoff
}

// mainObject is the element as an object of its frame's main world (in
// the object group).
func (e *Element) mainObject(ctx context.Context, s playwright.CDPSession, group string) (string, error) {
	b, err := e.backendNode(ctx, s)
	if err != nil {
		return "", err
	}
	res, err := call(ctx, e.tab.c, "resolve "+e.Target, stopOn{modal: e.tab}, func() (any, error) {
		return s.Send("DOM.resolveNode", map[string]any{"backendNodeId": b, "objectGroup": group})
	})
	if err != nil {
		return "", err
	}
	obj, _ := res.(map[string]any)["object"].(map[string]any)
	id, _ := obj["objectId"].(string)
	if id == "" {
		return "", fmt.Errorf("%s is no longer on the page", e.Target)
	}
	return id, nil
}

// isolatedObject is the element as an object of the watch's isolated world
// (main frame only).
func (e *Element) isolatedObject(ctx context.Context, s playwright.CDPSession, cid int, group string) (string, error) {
	b, err := e.backendNode(ctx, s)
	if err != nil {
		return "", err
	}
	res, err := call(ctx, e.tab.c, "resolve "+e.Target, stopOn{modal: e.tab}, func() (any, error) {
		return s.Send("DOM.resolveNode", map[string]any{"backendNodeId": b, "executionContextId": cid, "objectGroup": group})
	})
	if err != nil {
		return "", err
	}
	obj, _ := res.(map[string]any)["object"].(map[string]any)
	id, _ := obj["objectId"].(string)
	if id == "" {
		return "", fmt.Errorf("%s is no longer on the page", e.Target)
	}
	return id, nil
}

// Read runs a function of ours on the element, (el, arg) => …, in the
// watch's isolated world (never the page's own) and returns its JSON value.
// An element the hand-off cannot reach (in a frame of another process) is
// read through Playwright.
func (e *Element) Read(ctx context.Context, fn string, arg any) (any, error) {
	t := e.tab
	s, err := t.cdpSession(ctx)
	if err != nil {
		return nil, err
	}
	group := fmt.Sprintf("cloakmcp-%d", evalGroups.Add(1))
	defer t.releaseGroup(s, group)
	for attempt := 0; ; attempt++ {
		cid, err := t.watchContext(ctx, t.LastNavSeq())
		if err != nil {
			return nil, err
		}
		obj, err := e.isolatedObject(ctx, s, cid, group)
		if errors.Is(err, errNoHandoff) {
			return call(ctx, t.c, "read "+e.Target, stopOn{modal: t}, func() (any, error) { return e.loc.Evaluate(fn, arg) })
		}
		var pe *PageError
		if err != nil {
			if attempt == 0 && errors.As(err, &pe) {
				t.forgetWatchContext(cid)
				continue
			}
			return nil, err
		}
		res, err := call(ctx, t.c, "read "+e.Target, stopOn{modal: t}, func() (any, error) {
			return s.Send("Runtime.callFunctionOn", map[string]any{
				"functionDeclaration": fn, "objectId": obj,
				"arguments":     []any{map[string]any{"objectId": obj}, map[string]any{"value": arg}},
				"returnByValue": true, "awaitPromise": true,
			})
		})
		if err != nil {
			return nil, err
		}
		m, _ := res.(map[string]any)
		if ex, ok := m["exceptionDetails"].(map[string]any); ok {
			return nil, &PageError{Op: "read " + e.Target, Msg: clip.FirstLine(fmt.Sprint(exceptionText(ex)))}
		}
		r, _ := m["result"].(map[string]any)
		return r["value"], nil
	}
}

// giveNode makes the node of backendNodeID, the element of ref, reachable
// by a Playwright locator of the main frame (the hand-off engine's
// "give:"), with no mark on the page.
func (t *Tab) giveNode(ctx context.Context, ref string, backendNodeID int64) (playwright.Locator, error) {
	s, err := t.cdpSession(ctx)
	if err != nil {
		return nil, err
	}
	ids, err := t.utilityContexts(ctx, s)
	if err != nil {
		return nil, err
	}
	key := "_cloakmcp_" + ref // the node the ref was last given
	for _, cid := range ids {
		res, err := t.CDP(ctx, "DOM.resolveNode", map[string]any{"backendNodeId": backendNodeID, "executionContextId": cid})
		if err != nil {
			continue // the node is in another frame than this world's
		}
		obj, _ := res.(map[string]any)["object"].(map[string]any)
		id, _ := obj["objectId"].(string)
		if id == "" {
			continue
		}
		_, err = t.CDP(ctx, "Runtime.callFunctionOn", map[string]any{
			"objectId":            id,
			"functionDeclaration": `function(k) { globalThis[k] = this.nodeType === 1 ? this : this.parentElement; }`,
			"arguments":           []any{map[string]any{"value": key}},
		})
		_, _ = t.CDP(ctx, "Runtime.releaseObject", map[string]any{"objectId": id})
		if err != nil {
			return nil, err
		}
		return t.p.Locator(handoffEngine + "=give:" + key), nil
	}
	return nil, errNoHandoff
}
