// WebMCP: the tools a tab's page registers through document.modelContext,
// heard over the tab's own CDP session (the WebMCP domain: toolsAdded,
// toolsRemoved, toolResponded) and called there (WebMCP.invokeTool). No
// call of ours runs in any world of the page: the browser reports the
// registrations and runs the page's own execute callback.

package page

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mxschmitt/playwright-go"
)

// Bounds on what a page may register: a page's tool is untrusted input.
const (
	// MaxWebMCPTools is how many tools a page's main frame may offer; later
	// registrations are counted and ignored (WebMCPList.Ignored).
	MaxWebMCPTools = 64
	// MaxWebMCPNameLen bounds a tool's name as the page gives it, in bytes;
	// a longer one is refused.
	MaxWebMCPNameLen = 256
	// MaxWebMCPDescription bounds a tool's description, in characters; a
	// longer one is cut (marked with "…").
	MaxWebMCPDescription = 2048
	// MaxWebMCPSchema bounds a tool's inputSchema as JSON, in bytes; a tool
	// with a larger one is refused.
	MaxWebMCPSchema = 16 << 10
	// maxRefusals is how many refusal reasons a tab keeps for its Page
	// section; the rest are counted.
	maxRefusals = 3
	// maxPendingResults bounds toolResponded events kept until their
	// invocation's caller looks (the answer can come before the caller
	// learns its invocation id).
	maxPendingResults = 16
)

// ErrWebMCPGone means the tool is not registered by the tab's current
// document: the page navigated, or never registered it.
var ErrWebMCPGone = errors.New("the page does not register that WebMCP tool (any more)")

// WebMCPTool is one tool a page registered, validated and bounded.
type WebMCPTool struct {
	// Name is the name the page registered (at most MaxWebMCPNameLen bytes).
	Name string
	// Description is the page's description, cut to MaxWebMCPDescription.
	Description string
	// InputSchema is the page's object schema as JSON, at most
	// MaxWebMCPSchema bytes; {"type":"object"} when the page gave none.
	InputSchema json.RawMessage
	// The page's annotation hints.
	ReadOnly, Consequential, UntrustedContent bool
}

// WebMCPList is what the tab's current document offers.
type WebMCPList struct {
	// Tools are the tools kept, in the order the page registered them.
	Tools []WebMCPTool
	// Ignored counts registrations past MaxWebMCPTools.
	Ignored int
	// Refused counts tools refused for their name or schema; Reasons are
	// the first few reasons.
	Refused int
	Reasons []string
	// Doc numbers the tab's documents: a list of another document offers
	// other tools.
	Doc int
}

// webmcpState is a tab's side of WebMCP, under Tab.mu.
type webmcpState struct {
	on      bool   // the session asked for WebMCP
	frame   string // the main frame's id (the page's target id)
	list    WebMCPList
	docGone chan struct{} // closed when the document of list.Doc goes

	pending map[string]webmcpAnswer      // answers nobody waited for yet
	order   []string                     // pending's keys, oldest first
	waiting map[string]chan webmcpAnswer // invocation id → its caller
}

// webmcpAnswer is a toolResponded event.
type webmcpAnswer struct {
	status string // Completed, Canceled, Error
	output any
	err    string
}

// WebMCPList returns what the tab's current document offers (a copy); the
// zero list when WebMCP is off.
func (t *Tab) WebMCPList() WebMCPList {
	t.mu.Lock()
	defer t.mu.Unlock()
	l := t.wm.list
	l.Tools = append([]WebMCPTool(nil), l.Tools...)
	l.Reasons = append([]string(nil), l.Reasons...)
	return l
}

// watchWebMCP subscribes to the WebMCP events of s, the tab's own CDP
// session, and enables the domain (the browser then reports the tools
// already registered) in the background.
func (t *Tab) watchWebMCP(s playwright.CDPSession) {
	if !t.c.env.WebMCP {
		return
	}
	t.c.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), cdpAttachTimeout)
		defer cancel()
		frame, err := t.TargetID(ctx) // a page's main frame id is its target id
		if err != nil {
			t.c.env.Log.Debug().Err(err).Int("tab", t.ID).Msg("webmcp: no target id; the page's tools are not collected")
			return
		}
		t.mu.Lock()
		t.wm.on, t.wm.frame = true, frame
		if t.wm.docGone == nil {
			t.wm.docGone = make(chan struct{})
		}
		t.mu.Unlock()
		s.On("WebMCP.toolsAdded", func(m map[string]any) { t.webmcpAdded(m) })
		s.On("WebMCP.toolsRemoved", func(m map[string]any) { t.webmcpRemoved(m) })
		s.On("WebMCP.toolResponded", func(m map[string]any) { t.webmcpResponded(m) })
		// Events of one session arrive in order: a main-frame navigation
		// is heard before the new document's registrations.
		s.On("Page.frameNavigated", func(m map[string]any) {
			if f, _ := m["frame"].(map[string]any); f != nil && f["parentId"] == nil {
				t.webmcpNewDocument()
			}
		})
		for _, method := range []string{"Page.enable", "WebMCP.enable"} {
			if _, err := call(ctx, t.c, "watch WebMCP tools", stopOn{}, func() (any, error) { return s.Send(method, map[string]any{}) }); err != nil {
				t.c.env.Log.Debug().Err(err).Int("tab", t.ID).Str("method", method).Msg("webmcp: not enabled")
				return
			}
		}
	})
}

// webmcpChanged tells the session the tab's list changed. t.mu is not held.
func (t *Tab) webmcpChanged() {
	if f := t.c.env.OnWebMCP; f != nil {
		f(t)
	}
}

// webmcpNewDocument forgets the tools of the document the main frame left.
func (t *Tab) webmcpNewDocument() {
	t.mu.Lock()
	had := len(t.wm.list.Tools)+t.wm.list.Ignored+t.wm.list.Refused > 0
	t.wm.list = WebMCPList{Doc: t.wm.list.Doc + 1}
	if t.wm.docGone != nil {
		close(t.wm.docGone)
	}
	t.wm.docGone = make(chan struct{})
	t.mu.Unlock()
	if had {
		t.webmcpChanged()
	}
}

// webmcpAdded keeps the main frame's new tools within the bounds; the
// session hears of a change to the tools kept (not of those refused or
// ignored: a page registering without end wakes nobody).
func (t *Tab) webmcpAdded(m map[string]any) {
	raw, _ := m["tools"].([]any)
	changed := false
	t.mu.Lock()
	for _, r := range raw {
		tm, _ := r.(map[string]any)
		if tm == nil || tm["frameId"] != t.wm.frame {
			continue // a child frame's tool: only the page's own are offered
		}
		tool, why := parseWebMCPTool(tm)
		l := &t.wm.list
		if why != "" {
			l.Refused++
			if len(l.Reasons) < maxRefusals {
				l.Reasons = append(l.Reasons, why)
			}
			// The tool list stands: the Page section says it.
			t.c.env.Log.Debug().Int("tab", t.ID).Str("reason", why).Msg("webmcp: tool refused")
			continue
		}
		if i := indexWebMCP(l.Tools, tool.Name); i >= 0 {
			l.Tools[i] = tool // registered again: the latest stands
			changed = true
			continue
		}
		if len(l.Tools) >= MaxWebMCPTools {
			if l.Ignored == 0 {
				t.c.env.Log.Info().Int("tab", t.ID).Int("max", MaxWebMCPTools).Msg("webmcp: the page registers more tools than offered; the rest are ignored")
			}
			l.Ignored++
			continue
		}
		l.Tools = append(l.Tools, tool)
		changed = true
	}
	t.mu.Unlock()
	if changed {
		t.webmcpChanged()
	}
}

// webmcpRemoved drops the main frame's unregistered tools.
func (t *Tab) webmcpRemoved(m map[string]any) {
	raw, _ := m["tools"].([]any)
	changed := false
	t.mu.Lock()
	for _, r := range raw {
		tm, _ := r.(map[string]any)
		name, _ := tm["name"].(string)
		if tm == nil || tm["frameId"] != t.wm.frame {
			continue
		}
		if i := indexWebMCP(t.wm.list.Tools, name); i >= 0 {
			t.wm.list.Tools = append(t.wm.list.Tools[:i], t.wm.list.Tools[i+1:]...)
			changed = true
		}
	}
	t.mu.Unlock()
	if changed {
		t.webmcpChanged()
	}
}

// webmcpResponded hands an answer to its caller, or keeps it (bounded)
// for a caller that has not asked yet.
func (t *Tab) webmcpResponded(m map[string]any) {
	id, _ := m["invocationId"].(string)
	if id == "" {
		return
	}
	a := webmcpAnswer{output: m["output"]}
	a.status, _ = m["status"].(string)
	a.err, _ = m["errorText"].(string)
	if ex, ok := m["exception"].(map[string]any); ok {
		if d, ok := ex["description"].(string); ok && d != "" {
			a.err = d
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if ch := t.wm.waiting[id]; ch != nil {
		delete(t.wm.waiting, id)
		ch <- a
		return
	}
	if t.wm.pending == nil {
		t.wm.pending = map[string]webmcpAnswer{}
	}
	if len(t.wm.order) >= maxPendingResults {
		delete(t.wm.pending, t.wm.order[0])
		t.wm.order = t.wm.order[1:]
	}
	t.wm.pending[id] = a
	t.wm.order = append(t.wm.order, id)
}

// WebMCPResult is what a page's tool answered.
type WebMCPResult struct {
	// Output is the page's result as the browser delivered it (a string,
	// or the JSON value the tool returned).
	Output any
	// Failed is set when the page's tool threw or reported an error; Error
	// says what.
	Failed bool
	Error  string
}

// CallWebMCP calls the page's tool name of document doc (WebMCPList.Doc)
// with input, and waits for its answer at most timeout: past it the
// invocation is cancelled and a *TimeoutError returned. ErrWebMCPGone
// when the document no longer offers the tool or leaves during the call.
func (t *Tab) CallWebMCP(ctx context.Context, doc int, name string, input map[string]any, timeout time.Duration) (WebMCPResult, error) {
	t.mu.Lock()
	on, frame, l, gone := t.wm.on, t.wm.frame, t.wm.list, t.wm.docGone
	t.mu.Unlock()
	if !on || l.Doc != doc || indexWebMCP(l.Tools, name) < 0 {
		return WebMCPResult{}, ErrWebMCPGone
	}
	if input == nil {
		input = map[string]any{}
	}
	op := "call the page's WebMCP tool " + name
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	s, err := t.cdpSession(ctx)
	if err != nil {
		return WebMCPResult{}, err
	}
	res, err := call(ctx, t.c, op, stopOn{modal: t}, func() (any, error) {
		return sendCDP(ctx, s, 0, "WebMCP.invokeTool", map[string]any{"frameId": frame, "toolName": name, "input": input})
	})
	if err != nil {
		return WebMCPResult{}, err
	}
	id, _ := res.(map[string]any)["invocationId"].(string)
	if id == "" {
		return WebMCPResult{}, fmt.Errorf("%s: the browser gave no invocation id", op)
	}
	ch := make(chan webmcpAnswer, 1)
	t.mu.Lock()
	if a, ok := t.wm.pending[id]; ok {
		delete(t.wm.pending, id)
		ch <- a
	} else {
		if t.wm.waiting == nil {
			t.wm.waiting = map[string]chan webmcpAnswer{}
		}
		t.wm.waiting[id] = ch
	}
	t.mu.Unlock()
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	a, err := call(ctx, t.c, op, stopOn{modal: t, busyOK: true}, func() (webmcpAnswer, error) {
		select {
		case a := <-ch:
			return a, nil
		case <-gone:
			return webmcpAnswer{}, ErrWebMCPGone
		case <-wctx.Done():
			return webmcpAnswer{}, wctx.Err()
		}
	})
	if err != nil {
		t.mu.Lock()
		delete(t.wm.waiting, id)
		t.mu.Unlock()
		// The page may never answer: end its invocation (it hears its
		// cancel event), bounded, in the background.
		t.c.Go(func() {
			cctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
			defer cancel()
			_, _ = call(cctx, t.c, "cancel a WebMCP call", stopOn{}, func() (any, error) {
				return sendCDP(cctx, s, 0, "WebMCP.cancelInvocation", map[string]any{"invocationId": id})
			})
		})
		if errors.Is(err, ErrWebMCPGone) {
			return WebMCPResult{}, ErrWebMCPGone
		}
		return WebMCPResult{}, err
	}
	switch a.status {
	case "Completed":
		return WebMCPResult{Output: a.output}, nil
	case "Canceled":
		return WebMCPResult{Failed: true, Error: "the call was cancelled" + prefixed(": ", a.err)}, nil
	default:
		return WebMCPResult{Failed: true, Error: "the page's tool failed" + prefixed(": ", a.err)}, nil
	}
}

func prefixed(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}

func indexWebMCP(tools []WebMCPTool, name string) int {
	for i, x := range tools {
		if x.Name == name {
			return i
		}
	}
	return -1
}

// parseWebMCPTool validates one tool of a toolsAdded event: its name and
// schema bounded, its description cut. why says why it was refused.
func parseWebMCPTool(m map[string]any) (tool WebMCPTool, why string) {
	name, _ := m["name"].(string)
	label := name
	if len(label) > 40 {
		label = label[:40] + "…"
	}
	switch {
	case name == "" || strings.TrimSpace(name) == "":
		return tool, "a tool has no name"
	case len(name) > MaxWebMCPNameLen:
		return tool, fmt.Sprintf("%q: its name is %d bytes (at most %d)", label, len(name), MaxWebMCPNameLen)
	case !utf8.ValidString(name):
		return tool, fmt.Sprintf("%q: its name is not valid UTF-8", label)
	}
	tool.Name = name
	desc, _ := m["description"].(string)
	if utf8.RuneCountInString(desc) > MaxWebMCPDescription {
		desc = string([]rune(desc)[:MaxWebMCPDescription]) + "…"
	}
	tool.Description = strings.ToValidUTF8(desc, "\uFFFD")
	schema, err := webmcpSchema(m["inputSchema"])
	if err != "" {
		return WebMCPTool{}, fmt.Sprintf("%q: %s", label, err)
	}
	tool.InputSchema = schema
	if a, ok := m["annotations"].(map[string]any); ok {
		tool.ReadOnly = a["readOnly"] == true
		tool.Consequential = a["consequential"] == true
		tool.UntrustedContent = a["untrustedContent"] == true
	}
	return tool, ""
}

// webmcpSchema checks an inputSchema: absent is an empty object schema;
// otherwise a JSON object of type "object" whose properties, if any, are
// an object, at most MaxWebMCPSchema bytes.
func webmcpSchema(v any) (json.RawMessage, string) {
	if v == nil {
		return json.RawMessage(`{"type":"object"}`), ""
	}
	if s, ok := v.(string); ok {
		// Some builds report the schema as the page's JSON text.
		if len(s) > MaxWebMCPSchema {
			return nil, fmt.Sprintf("its inputSchema is %d bytes (at most %d)", len(s), MaxWebMCPSchema)
		}
		var parsed any
		if json.Unmarshal([]byte(s), &parsed) != nil {
			return nil, "its inputSchema is not JSON"
		}
		v = parsed
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, "its inputSchema is not a JSON object"
	}
	if m["type"] != "object" {
		return nil, `its inputSchema is not an object schema (type "object")`
	}
	if p, ok := m["properties"]; ok {
		if _, ok := p.(map[string]any); !ok {
			return nil, "its inputSchema's properties is not an object"
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, "its inputSchema cannot be encoded"
	}
	if len(b) > MaxWebMCPSchema {
		return nil, fmt.Sprintf("its inputSchema is %d bytes (at most %d)", len(b), MaxWebMCPSchema)
	}
	return b, ""
}
