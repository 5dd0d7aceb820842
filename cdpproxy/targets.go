package cdpproxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// Targets a CDP client never reaches: the DevTools frontend (devtools:,
// chrome-devtools:) and the browser's WebUI (chrome:, chrome-untrusted:,
// chrome-search:, and about: pages, which Chromium maps to chrome: ones).
// Their pages hold bindings no web page has — the frontend's
// InspectorFrontendHost loads any file: URL and any loopback port without
// CORS; WebUI changes settings and the download directory — so Runtime on
// them would be an escape from the browser. The proxy refuses to create,
// navigate to, attach to, activate or close such targets, and hides them
// from target lists and events. This holds whatever the file policy.

// maxKnownTargets bounds a generation's target table; past it the table is
// cleared and targets are looked up again (an unknown target is refused).
const maxKnownTargets = 8192

// errPrivileged is the refusal of a privileged URL or target.
var errPrivileged = errors.New("DevTools and browser pages (devtools:, chrome:, about: other than about:blank) " +
	"are not reachable through this CDP proxy")

// privilegedURL reports a URL of a DevTools or WebUI page, or a view-source:
// of one. Its scheme is read the way Chromium's URL parser reads it (see
// checkURL).
func privilegedURL(raw string) bool {
	s := cleanURL(raw)
	for range 8 { // view-source:view-source:…
		i := strings.IndexByte(s, ':')
		if i <= 0 || !validScheme(s[:i]) {
			return false
		}
		switch strings.ToLower(s[:i]) {
		case "devtools", "chrome-devtools", "chrome", "chrome-untrusted", "chrome-search":
			return true
		case "about":
			page, _, _ := strings.Cut(strings.ToLower(s[i+1:]), "#")
			page, _, _ = strings.Cut(page, "?")
			return page != "" && page != "blank" && page != "srcdoc"
		case "view-source":
			s = cleanURL(s[i+1:])
			continue
		}
		return false
	}
	return true
}

// cleanURL drops tabs and line breaks anywhere and leading and trailing
// control characters and spaces, as Chromium's URL parser does.
func cleanURL(raw string) string {
	s := strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, raw)
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// checkNavigation applies the target rule, then (unless g is nil: no file
// policy) the file policy, to a URL a client asks the browser to load.
func checkNavigation(g *fileGuard, u string) error {
	if privilegedURL(u) {
		return fmt.Errorf("URL %s: %w", quote(u), errPrivileged)
	}
	if g != nil {
		return checkURL(u)
	}
	return nil
}

// targetTable is what a generation's proxy knows of the browser's targets:
// whether each is privileged, learnt from the browser's target lists and
// events on every socket and from /json/list. A target once privileged stays
// so. All methods are safe for concurrent use.
type targetTable struct {
	mu    sync.Mutex
	known map[string]bool // target id → privileged
}

func newTargetTable() *targetTable { return &targetTable{known: make(map[string]bool)} }

// observe records a target's URL and reports whether it is privileged.
func (t *targetTable) observe(id, url string) bool {
	priv := privilegedURL(url)
	if id == "" {
		return priv
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	old, ok := t.known[id]
	if !ok && len(t.known) >= maxKnownTargets {
		clear(t.known)
	}
	priv = priv || old
	t.known[id] = priv
	return priv
}

// forget drops a destroyed target.
func (t *targetTable) forget(id string) {
	t.mu.Lock()
	delete(t.known, id)
	t.mu.Unlock()
}

// lookup reports what is known of a target.
func (t *targetTable) lookup(id string) (privileged, known bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	privileged, known = t.known[id]
	return privileged, known
}

// targetInfo is the part of a TargetInfo (or a /json/list entry) the
// proxy reads.
type targetInfo struct {
	TargetID string `json:"targetId"`
	ID       string `json:"id"` // /json/list's name for it
	URL      string `json:"url"`
}

// observeInfo records one TargetInfo object; a value that is not one counts
// as privileged, so it is never shown.
func (t *targetTable) observeInfo(raw json.RawMessage) bool {
	var ti targetInfo
	if json.Unmarshal(raw, &ti) != nil {
		return true
	}
	id := ti.TargetID
	if id == "" {
		id = ti.ID
	}
	return t.observe(id, ti.URL)
}

// filterList records the targets of a JSON array of TargetInfos or
// /json/list entries and returns the array without the privileged ones
// (and without anything that is not an object), and how many it dropped.
func (t *targetTable) filterList(b []byte) ([]byte, int, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(b, &items); err != nil {
		return nil, 0, errNotJSON
	}
	kept := items[:0]
	for _, it := range items {
		if !t.observeInfo(it) {
			kept = append(kept, it)
		}
	}
	dropped := len(items) - len(kept)
	if dropped == 0 {
		return b, 0, nil
	}
	out, err := json.Marshal(kept)
	return out, dropped, err
}
