// The hand-off of a DOM node (a backend node id, as an ARIA snapshot names
// its nodes) to a Playwright locator, with nothing written to the page.

package page

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"

	"github.com/mxschmitt/playwright-go"
)

// A Playwright locator is resolved by Playwright's own engines in its
// utility world, an isolated world the page cannot see; a backend node id
// is what the tab's CDP session knows. The node is resolved over CDP into
// the utility world of its frame and kept there as a global; the hand-off
// engine (handoff.js), a content script that runs in that same world,
// matches it. Nothing is written to the page's DOM or its world.

// handoffEngine names the selector engine.
const handoffEngine = "cloakmcp-handoff"

//go:embed handoff.js
var handoffJS string

// partEvent names the event the watch sends the part of the page a
// snapshot walks (splice.go) and the hand-off engine's listener keeps: made
// per process, so the page cannot send it.
var partEvent = "cloakmcp" + strconv.FormatUint(rand.Uint64(), 36)

// registered keeps the Playwright instances the engine is registered with.
var registered sync.Map

// RegisterEngines registers the hand-off engine with pw (once per
// Playwright instance: its contexts, and those made after, get it).
func RegisterEngines(pw *playwright.Playwright) {
	if pw == nil || pw.Selectors == nil {
		return
	}
	if _, loaded := registered.LoadOrStore(pw, true); loaded {
		return
	}
	src := strings.ReplaceAll(strings.TrimSpace(handoffJS), "CLOAKMCP_PART", partEvent)
	if err := pw.Selectors.Register(handoffEngine, playwright.Script{Content: &src}, playwright.SelectorsRegisterOptions{ContentScript: playwright.Bool(true)}); err != nil && !strings.Contains(err.Error(), "already registered") {
		registered.Delete(pw)
	}
}

// handoff is the locator of the hand-off engine's verb with key on the
// tab's main frame (handoff.js).
func (t *Tab) handoff(verb, key string) playwright.Locator {
	return t.p.Locator(handoffEngine + "=" + verb + ":" + key)
}

// errNoHandoff means the node could not be handed over: it is in no frame
// of this tab's renderer, or it went.
var errNoHandoff = errors.New("the node cannot be handed over")

// utilityWorldPrefix starts the name of Playwright's utility worlds.
const utilityWorldPrefix = "__playwright_utility_world_"

// utilityContexts lists the execution contexts of Playwright's utility
// worlds in the tab's frames (those of this renderer). The session's
// Runtime domain is enabled only while they are read: it reports the
// contexts there are, then is disabled. Enabling it replays the page's
// console messages to this session, which reads a logged error's name in
// the page's world: the last resort of giveInWorlds only.
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
			if strings.HasPrefix(name, utilityWorldPrefix) && id != 0 {
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
	// The contexts there are are reported before enable's answer, and
	// heard (events are handled in order) before disable's.
	_, err := call(ctx, t.c, "list the page's worlds", stopOn{modal: t}, func() (any, error) {
		if _, err := sendCDP(ctx, s, 0, "Runtime.enable", map[string]any{}); err != nil {
			return nil, err
		}
		return sendCDP(ctx, s, 0, "Runtime.disable", map[string]any{})
	})
	t.mu.Lock()
	ids := t.utilCtx
	t.utilCtx = nil
	t.mu.Unlock()
	return ids, err
}

// giveNode makes the node of backendNodeID (its element, for a text node)
// reachable by a Playwright locator of the main frame, under the name of
// ref, with no mark on the page and, for a node of the document or of an
// open shadow root, no Runtime.enable (see mainObject): the hand-off
// engine's listen, in Playwright's utility world, waits for an event of a
// name made for this call; the tab's isolated world, where the node is
// resolved by its backend id, sends it from the node; the listener keeps
// the node where give finds it. A node in a closed shadow root (whose
// events reach the document retargeted to its host) or in no document of
// that world goes the way of giveInWorlds.
func (t *Tab) giveNode(ctx context.Context, ref string, backendNodeID int64) (playwright.Locator, error) {
	key := "cloakmcpRef_" + ref // the node the ref was last given
	name := "cloakmcp" + strconv.FormatUint(rand.Uint64(), 36)
	if _, err := call(ctx, t.c, "find "+ref, stopOn{modal: t}, func() (int, error) {
		return t.handoff("listen", name+":"+key).Count()
	}); err != nil {
		return nil, err
	}
	sent, err := t.sendFromNode(ctx, backendNodeID, name)
	switch {
	case err != nil:
		return nil, err
	case sent == "gone":
		return nil, errNoHandoff
	case sent != "sent":
		return t.giveInWorlds(ctx, key, backendNodeID)
	}
	return t.handoff("give", key), nil
}

// sendFromNode resolves the node of backend in the tab's isolated world
// and sends the event name from it (giveSend): "sent", "gone" (no longer
// in the document), "closed" (in a closed shadow root), or "other" (not
// in that world's document).
func (t *Tab) sendFromNode(ctx context.Context, backend int64, name string) (string, error) {
	for attempt := 0; ; attempt++ {
		cid, err := t.watchContext(ctx)
		if err != nil {
			return "", err
		}
		v, err := t.callOnNode(ctx, backend, cid, giveSend, name)
		if errors.Is(err, errNotInWorld) {
			if attempt == 0 {
				t.forgetWatchContext(cid) // the world may have gone with its document
				continue
			}
			return "other", nil
		}
		s, _ := v.(string)
		return s, err
	}
}

// errNotInWorld means a node is not in the execution context it was
// resolved in (another frame's, or a context that went).
var errNotInWorld = errors.New("the node is not in that world")

// callOnNode resolves the node of backend in the execution context cid and
// calls fn on it there (this = the node) with args, giving its value.
func (t *Tab) callOnNode(ctx context.Context, backend int64, cid int, fn string, args ...any) (any, error) {
	res, err := t.CDP(ctx, "DOM.resolveNode", map[string]any{"backendNodeId": backend, "executionContextId": cid})
	if isPageErr(err) {
		return nil, errNotInWorld
	}
	if err != nil {
		return nil, err
	}
	obj, _ := res.(map[string]any)["object"].(map[string]any)
	id, _ := obj["objectId"].(string)
	if id == "" {
		return nil, errNotInWorld
	}
	callArgs := make([]any, len(args))
	for i, a := range args {
		callArgs[i] = map[string]any{"value": a}
	}
	res, err = t.CDP(ctx, "Runtime.callFunctionOn", map[string]any{
		"objectId": id, "functionDeclaration": fn, "returnByValue": true, "arguments": callArgs,
	})
	_, _ = t.CDP(ctx, "Runtime.releaseObject", map[string]any{"objectId": id})
	if err != nil {
		return nil, err
	}
	m, _ := res.(map[string]any)
	if ex, ok := m["exceptionDetails"].(map[string]any); ok {
		return nil, fmt.Errorf("hand over the node: %v", exceptionText(ex))
	}
	r, _ := m["result"].(map[string]any)
	return r["value"], nil
}

// giveSend (isolated world, this = the node) sends an event named name
// from the node's element, when the listener on the document can get it.
const giveSend = `function (name) {
	const el = this.nodeType === 1 ? this : this.parentElement;
	if (!el || !el.isConnected) return 'gone';
	if (el.ownerDocument !== document) return 'other';
	for (let r = el.getRootNode(); r !== document; r = r.host.getRootNode()) {
		if (!r.host || r.mode !== 'open') return 'closed';
	}
	el.dispatchEvent(new CustomEvent(name, {composed: true}));
	return 'sent';
}`

// giveInWorlds hands the node over by resolving it in each of Playwright's
// utility worlds of the tab (utilityContexts, which enables the Runtime
// domain for a moment: the page's console messages are replayed to the
// session, a tell for a page that logged an error) and keeping it in the
// global key of the world of its frame.
func (t *Tab) giveInWorlds(ctx context.Context, key string, backendNodeID int64) (playwright.Locator, error) {
	s, err := t.cdpSession(ctx)
	if err != nil {
		return nil, err
	}
	ids, err := t.utilityContexts(ctx, s)
	if err != nil {
		return nil, err
	}
	for _, cid := range ids {
		_, err := t.callOnNode(ctx, backendNodeID, cid, `function(k) { globalThis[k] = this.nodeType === 1 ? this : this.parentElement; }`, key)
		if errors.Is(err, errNotInWorld) {
			continue // the node is in another frame than this world's
		}
		if err != nil {
			return nil, err
		}
		return t.handoff("give", key), nil
	}
	return nil, errNoHandoff
}

// mainObject gives the element e's locator finds as a remote object of
// its frame's main world, in the object group, with no mark on the page
// and no Runtime.enable (which would replay the page's console messages to
// the session, reading each logged error's name in the page's world at a
// time the page did not log: a tell). The tab's isolated world (the
// watch's) listens on the document for an event of a name made for this
// call; the hand-off engine's take, in Playwright's utility world, sends
// that event from the element the locator found. Events cross worlds
// through the DOM, and a page cannot listen for an event whose name it
// does not know. The isolated world's listener keeps the element, which
// the tab's CDP session reads there and resolves, by its backend node id,
// in the main world. errNoHandoff: no single element is there now, or it
// is in a frame or a closed shadow root (take does not send then).
func (e *Element) mainObject(ctx context.Context, group string) (string, error) {
	t := e.tab
	name := "cloakmcp" + group + strconv.FormatUint(rand.Uint64(), 36)
	if _, err := t.Read(ctx, takeListen, name); err != nil {
		return "", err
	}
	n, err := call(ctx, t.c, "find "+e.Target, stopOn{modal: t}, func() (int, error) {
		return e.loc.Locator(handoffEngine + "=take:" + name).Count()
	})
	id, rerr := t.isolatedObject(ctx, takeRead, group, name)
	switch {
	case err != nil:
		return "", err
	case rerr != nil:
		return "", rerr
	case n != 1 || id == "":
		return "", errNoHandoff
	}
	res, err := t.CDP(ctx, "DOM.describeNode", map[string]any{"objectId": id})
	if err != nil {
		return "", err
	}
	node, _ := res.(map[string]any)["node"].(map[string]any)
	backend, _ := node["backendNodeId"].(float64)
	res, err = t.CDP(ctx, "DOM.resolveNode", map[string]any{"backendNodeId": backend, "objectGroup": group})
	if err != nil {
		return "", err
	}
	obj, _ := res.(map[string]any)["object"].(map[string]any)
	if id, _ = obj["objectId"].(string); id == "" {
		return "", errNoHandoff
	}
	return id, nil
}

// takeListen (isolated world) listens, in the capture phase of the
// document, for one event named name and keeps its first target.
const takeListen = `(name) => {
	const h = (e) => { globalThis[name] = e.composedPath()[0]; };
	globalThis[name + '_h'] = h;
	document.addEventListener(name, h, {capture: true, once: true});
	return true;
}`

// takeRead (isolated world) gives the element takeListen kept, if any,
// and stops listening.
const takeRead = `(name) => {
	const n = globalThis[name];
	document.removeEventListener(name, globalThis[name + '_h'], {capture: true});
	delete globalThis[name];
	delete globalThis[name + '_h'];
	return n && n.nodeType === 1 ? n : null;
}`
