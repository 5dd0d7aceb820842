package page

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mxschmitt/playwright-go"

	"github.com/cloakmcp/cloakbrowser-mcp/session/watch"
)

// Buffer caps per page: a page that logs or requests without end costs the
// server bounded memory; the oldest entries are dropped first. maxEntryText
// cuts each text (Cut).
const (
	maxConsole   = 500
	maxErrors    = 200
	maxRequests  = 500
	maxEntryText = 2048
)

// ConsoleEntry is one console message or page error.
type ConsoleEntry struct {
	Seq  int
	Type string // log, info, warning, error, debug … ; "pageerror" for uncaught errors
	Text string
	// Where is the source of a console message, "url:line" (0-based line,
	// as upstream prints it); empty when the browser names none.
	Where string
	At    time.Time
}

// RequestEntry is one network request the page made.
type RequestEntry struct {
	Seq      int
	Method   string
	URL      string
	Resource string
	Status   int
	Failure  string
	Request  playwright.Request
}

// ModalKind says what a modal state is.
type ModalKind string

// Modal kinds.
const (
	ModalDialog      ModalKind = "dialog"
	ModalFileChooser ModalKind = "filechooser"
)

// ModalState is a dialog or file chooser the page is waiting on.
type ModalState struct {
	Kind        ModalKind
	Description string
	dialog      playwright.Dialog
	fileChooser playwright.FileChooser
	// ClearedBy is the tool that handles this state.
	ClearedBy string
}

// Event is something that happened on the page worth telling the agent
// (downloads, a tab closing), reported once under "### Events".
type Event struct {
	Seq  int
	Text string
}

// Tab is one page with its state. The state dies with the page. Its page
// is reached only through the methods of this package (the door, door.go).
type Tab struct {
	// ID numbers the generation's tabs from 1, in the order they opened.
	ID int

	p       playwright.Page
	c       *Context
	warming atomic.Bool   // warmInjected's query is in flight
	wired   chan struct{} // closed once wire subscribed the tab to its page's events
	crashCh chan struct{} // closed when the page crashes

	mu        sync.Mutex
	seq       int
	console   []ConsoleEntry
	requests  []*RequestEntry
	modals    []*ModalState
	events    []Event
	crashed   bool
	closed    bool
	snap      *Snapshot // the last whole-page AI snapshot the agent saw
	refs      tabRefs   // the trees behind the tab's refs (refs.go)
	title     string    // the last title read; kept while a dialog blocks the page
	hasTitle  bool
	armed     armed
	cdpSess   playwright.CDPSession
	opens     []int // seq at each window the page asked to open (Page.windowOpen), the last few
	targetID  string
	emulation emulationState
	lastNav   int                        // seq at the last main-frame navigation
	busy      bool                       // the main thread missed a liveness probe (page.go); cleared by a main-frame navigation
	busyAt    time.Time                  // when busy was last set, in the current document (zero: never)
	loadedNav int                        // lastNav when the load event last fired
	docNav    int                        // lastNav at the last main-frame navigation to a new document
	domNav    int                        // lastNav when DOMContentLoaded last fired in the main frame
	frameDOM  map[playwright.Frame]bool  // child frames attached since the tab was made → DOMContentLoaded seen
	wakeCh    chan struct{}              // closed when the tab's load state or requests change (pollUntil)
	reported  int                        // events up to this seq were already reported
	inflight  map[playwright.Request]int // request → seq when it started
	netAt     time.Time                  // last request start or end
	modalCh   chan struct{}              // closed when the next modal state opens

	// Leaving a page (stuck.go).
	docTimes  []time.Time   // when the last documents were committed, oldest first (at most churnDocs)
	churnCh   chan struct{} // closed when the page starts churning (churning)
	navAt     time.Time     // when the last main-frame navigation committed
	ownNav    int           // lastNav when a navigation of ours last committed
	sameDoc   []sameDocNav  // the last churnDocs same-document navigations (stuck.go)
	leaving   bool          // a navigation is leaving the document docNav was at leaveDoc
	leaveDoc  int           // docNav when the navigation started
	dismissed int           // dialogs of the document left dismissed while leaving
	firstGone string        // the first of them

	// The hand-off (handoff.go).
	worldsMu sync.Mutex // one listing of the utility worlds at a time
	ctxHeard bool       // the session's executionContextCreated is heard
	utilCtx  []int      // the utility worlds heard while listing; nil when not listing

	// The watch (watch.go).
	watchCtx int // execution context of the watch's world, 0 if none
	watchDoc int // docNav when watchCtx was made
	// popup: the page was opened by a page, not by us (t.mu once the
	// tab is listed).
	popup bool
	// scripted says the agent's code ran in the document of docNav
	// scriptedDoc (see IdleBlank).
	scripted    bool
	scriptedDoc int
	// watchInstalled is the watch context a whole watch ran in (its reads
	// send watch.Call), 0 if none.
	watchInstalled int
	// watchOpening is closed when the world being made for document
	// watchOpeningDoc is made (or not); nil when none is being made.
	watchOpening    chan struct{}
	watchOpeningDoc int
	// The watches of out-of-process child frames (framewatch.go).
	frameWatches map[playwright.Frame]*frameWatch
	frameInProc  map[playwright.Frame]string        // child frames found without a target of their own → their URL then
	frameOpening map[playwright.Frame]chan struct{} // child frames whose session is being opened → closed when done
	frameMarks   map[playwright.Frame]int           // each frame watch's last mark
	snapBase     int                                // the watch base snap was taken after; 0: none that stands
	snapMarksOff bool                               // snap stands for the page but for its focus mark or typed values
	settled      *settledRead                       // the read the last Settle made
	titleAt      time.Time                          // when the watch read title; zero once used
	lastMark     int                                // the newest base the watch marked (a read's, or one it told of)
	lastTell     watch.Tell                         // the newest tell (its Title kept as told since)
	toldNew      bool                               // lastTell came after the last read and no walk used it yet

	// refsBase is the watch base as of which snap's refs stand: snapBase,
	// or a base a later read marked that found nothing but values and
	// focus changed since (0: none). A value typed or a box ticked since
	// is not in snap as it shows, but every element of snap is still in
	// the page. The selectors kept for the refs stand while it does, and
	// no value changed (markRead), but for a field's own after a fill of
	// it (filled).
	refsBase int

	// filled is the fill that began last, until the next read of the
	// watch (markRead).
	filled fillNote

	seen seen // what the agent was shown (seen.go)

	wm webmcpState // the page's WebMCP tools (webmcp.go)
}

// Cut cuts s to maxEntryText bytes (on a rune boundary), marking the cut
// with "…": page text kept in buffers and notices.
func Cut(s string) string {
	if len(s) <= maxEntryText {
		return s
	}
	// Cut on a rune boundary.
	i := maxEntryText
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + "…"
}

// newTab makes the tab of p, not yet wired to its events (wire).
func newTab(c *Context, p playwright.Page, id int) *Tab {
	return &Tab{p: p, ID: id, c: c, inflight: map[playwright.Request]int{}, frameDOM: map[playwright.Frame]bool{},
		frameWatches: map[playwright.Frame]*frameWatch{}, frameInProc: map[playwright.Frame]string{},
		frameOpening: map[playwright.Frame]chan struct{}{}, frameMarks: map[playwright.Frame]int{},
		wired: make(chan struct{}), crashCh: make(chan struct{})}
}

// wire subscribes the tab to its page's events, one concern at a time,
// then opens its CDP session.
func (t *Tab) wire() {
	defer close(t.wired)
	t.wireLife()
	t.wireConsole()
	t.wireModals()
	t.wireRequests()
	t.wireLoadStates()
	t.wireNavigation()
	t.p.OnDownload(func(d playwright.Download) {
		// Saved into the output directory under a name of our own, within
		// the session's limits (the lifecycle's downloads).
		if t.c.env.OnDownload != nil {
			t.c.env.OnDownload(t, d)
		}
	})
	// Open the tab's CDP session now, while the page answers: attaching
	// one needs the renderer's main thread, and a page whose script never
	// yields can only be stopped (Runtime.terminateExecution) over a
	// session attached before.
	t.c.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), cdpAttachTimeout)
		defer cancel()
		_, _ = t.cdpSession(ctx)
	})
}

// wireLife notes the page closing or crashing.
func (t *Tab) wireLife() {
	t.p.OnClose(func(playwright.Page) {
		t.mu.Lock()
		t.closed = true
		t.mu.Unlock()
		t.c.removeTab(t)
		// Its tools go with it (and calls waiting on them answer), and
		// another tab may be current now.
		t.webmcpNewDocument()
		t.webmcpChanged()
	})
	t.p.OnCrash(func(playwright.Page) {
		t.mu.Lock()
		if !t.crashed {
			t.crashed = true
			close(t.crashCh) // calls in flight answer at once
		}
		t.wakeLocked()
		t.mu.Unlock()
		t.webmcpNewDocument() // the page's tools died with its renderer
		if t.c.env.OnCrash != nil {
			t.c.env.OnCrash(t)
		}
	})
}

// wireConsole buffers console messages and uncaught errors.
func (t *Tab) wireConsole() {
	t.p.OnConsole(func(m playwright.ConsoleMessage) {
		t.addConsole(m.Type(), m.Text(), consoleWhere(m))
		t.notifyConsole(m.Type(), m.Text())
	})
	t.p.OnPageError(func(err error) {
		t.addConsole("pageerror", err.Error(), "")
		t.notifyConsole("pageerror", err.Error())
	})
}

func (t *Tab) notifyConsole(typ, text string) {
	if t.c.env.OnConsole != nil {
		t.c.env.OnConsole(t, typ, text)
	}
}

// wireModals turns dialogs and file choosers into modal states, unless an
// armed answer takes them (arm.go).
func (t *Tab) wireModals() {
	t.p.OnDialog(func(d playwright.Dialog) {
		if t.takeArmedDialog(d) {
			return
		}
		desc := fmt.Sprintf("%q dialog with message %q", d.Type(), d.Message())
		if t.dismissLeaving(desc) {
			// A dialog of the page a navigation is leaving (a loop of
			// alerts): it would block the page being left.
			t.c.Go(func() { _ = d.Dismiss() })
			return
		}
		t.pushModal(&ModalState{Kind: ModalDialog, Description: desc, dialog: d, ClearedBy: "browser_handle_dialog"})
	})
	t.p.OnFileChooser(func(fc playwright.FileChooser) {
		if t.takeArmedChooser(fc) {
			return
		}
		t.pushModal(&ModalState{Kind: ModalFileChooser, Description: "File chooser", fileChooser: fc, ClearedBy: "browser_file_upload"})
	})
}

// wireRequests buffers the page's requests and keeps those in flight.
func (t *Tab) wireRequests() {
	t.p.OnRequest(func(r playwright.Request) {
		t.mu.Lock()
		t.seq++
		t.inflight[r] = t.seq
		t.netAt = time.Now()
		e := &RequestEntry{Seq: t.seq, Method: r.Method(), URL: Cut(r.URL()), Resource: r.ResourceType(), Request: r}
		t.requests = append(t.requests, e)
		if len(t.requests) > maxRequests {
			t.requests = t.requests[len(t.requests)-maxRequests:]
		}
		t.mu.Unlock()
	})
	// finishRequest asks the driver for the response: never on the
	// dispatch goroutine, and on a goroutine the context owns.
	t.p.OnRequestFinished(func(r playwright.Request) { t.c.Go(func() { t.finishRequest(r, "") }) })
	t.p.OnRequestFailed(func(r playwright.Request) {
		f := "failed"
		if err := r.Failure(); err != nil {
			f = err.Error()
		}
		t.c.Go(func() { t.finishRequest(r, f) })
	})
}

// finishRequest notes the end of r (failure is "" for a response).
func (t *Tab) finishRequest(r playwright.Request, failure string) {
	status := 0
	if failure == "" {
		if resp, err := r.Response(); err == nil && resp != nil {
			status = resp.Status()
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.inflight, r)
	t.netAt = time.Now()
	t.wakeLocked()
	for i := len(t.requests) - 1; i >= 0; i-- {
		if t.requests[i].Request == r {
			t.requests[i].Status = status
			t.requests[i].Failure = Cut(failure)
			break
		}
	}
}

// wireLoadStates keeps the load states from the driver's events, never
// asked of Playwright: its load-state waiters read the page's closed flag
// without a lock, a data race with the page closing.
func (t *Tab) wireLoadStates() {
	// loaded notes, in at, that a load state was reached in the current
	// document.
	loaded := func(at *int) func(playwright.Page) {
		return func(playwright.Page) {
			t.mu.Lock()
			*at = t.lastNav
			t.wakeLocked()
			t.mu.Unlock()
		}
	}
	t.p.OnDOMContentLoaded(loaded(&t.domNav))
	t.p.OnLoad(loaded(&t.loadedNav))
	t.p.OnFrameAttached(func(f playwright.Frame) {
		t.mu.Lock()
		t.frameDOM[f] = false
		t.mu.Unlock()
		onLoadState(f, func(state string) {
			if state != "domcontentloaded" {
				return
			}
			t.mu.Lock()
			if _, ok := t.frameDOM[f]; ok {
				t.frameDOM[f] = true
			}
			t.mu.Unlock()
		})
	})
	t.p.OnFrameDetached(func(f playwright.Frame) {
		t.mu.Lock()
		delete(t.frameDOM, f)
		t.frameGoneLocked(f)
		t.mu.Unlock()
	})
}

// warmInjected has Playwright make its injected script (the code of its
// snapshots and locators, 330 kB, made anew in each document's utility
// world) in the main frame's document that just committed, while the page
// loads, instead of at the first snapshot after the load: a page that
// waits for the network leaves the renderer idle meanwhile. The query, of
// the hand-off engine with a verb it does not know, matches nothing and
// runs in Playwright's utility world only: the page sees nothing. It is
// not waited for, and one at a time: a query still waiting (a page that
// keeps loading new documents) warms the document it ends in; the tab's
// close ends it.
func (t *Tab) warmInjected() {
	if !t.warming.CompareAndSwap(false, true) {
		return
	}
	t.c.Go(func() {
		defer t.warming.Store(false)
		_, _ = t.handoff("warm", "").Count()
	})
}

// wireNavigation does the bookkeeping of main-frame navigations. The main
// frame's own event (what the page's framenavigated is made from) also
// says whether a new document was committed.
func (t *Tab) wireNavigation() {
	onNavigated(t.p.MainFrame(), func(ev map[string]any) {
		if _, failed := ev["error"]; failed {
			return // a failed navigation commits nothing
		}
		_, newDoc := ev["newDocument"]
		t.mu.Lock()
		defer t.mu.Unlock()
		t.seq++
		t.lastNav = t.seq
		t.navAt = time.Now()
		if newDoc {
			t.docNav = t.lastNav
			t.noteDocLocked()
			t.openWatchWorld()
			t.warmInjected()
		} else {
			url, _ := ev["url"].(string)
			t.noteSameDocLocked(url)
		}
		t.wakeLocked()
		// Requests of the old document may never report an end.
		clear(t.inflight)
		// A new document: its title is unknown and its main thread has not
		// yet missed a probe.
		t.busy, t.hasTitle, t.titleAt = false, false, time.Time{}
		if newDoc {
			t.busyAt = time.Time{}
		}
		t.settled = nil
		if newDoc {
			// The last snapshot's watch base was in the old document. A
			// same-document navigation keeps the watch's world and its
			// bases; its reads say whether the new URL shows (:target).
			t.snapBase, t.refsBase, t.lastMark, t.lastTell, t.toldNew = 0, 0, 0, watch.Tell{}, false
		}
	})
}

// consoleWhere is a console message's source, "url:line", or "".
func consoleWhere(m playwright.ConsoleMessage) string {
	if l := m.Location(); l != nil && l.URL != "" {
		return fmt.Sprintf("%s:%d", Cut(l.URL), l.Line)
	}
	return ""
}

func (t *Tab) addConsole(typ, text, where string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.seq++
	t.console = append(t.console, ConsoleEntry{Seq: t.seq, Type: typ, Text: Cut(text), Where: where, At: time.Now()})
	limit := maxConsole
	if typ == "pageerror" {
		limit = maxConsole + maxErrors
	}
	if len(t.console) > limit {
		t.console = trimConsole(t.console)
	}
}

// trimConsole keeps at most maxConsole messages and maxErrors page errors,
// dropping the oldest of each.
func trimConsole(in []ConsoleEntry) []ConsoleEntry {
	msgs, errs := 0, 0
	for _, e := range in {
		if e.Type == "pageerror" {
			errs++
		} else {
			msgs++
		}
	}
	dropMsgs, dropErrs := max(0, msgs-maxConsole), max(0, errs-maxErrors)
	out := in[:0]
	for _, e := range in {
		if e.Type == "pageerror" && dropErrs > 0 {
			dropErrs--
			continue
		}
		if e.Type != "pageerror" && dropMsgs > 0 {
			dropMsgs--
			continue
		}
		out = append(out, e)
	}
	return out
}

func (t *Tab) pushModal(m *ModalState) {
	t.mu.Lock()
	t.modals = append(t.modals, m)
	if t.modalCh != nil {
		close(t.modalCh)
		t.modalCh = nil
	}
	t.mu.Unlock()
	t.c.modalOpened()
}

// ModalOpened returns a channel closed when the next modal state opens (or
// already closed if one is open), so an action can stop waiting on a page
// that is blocked by a dialog.
func (t *Tab) ModalOpened() <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.modals) > 0 {
		return closedCh
	}
	if t.modalCh == nil {
		t.modalCh = make(chan struct{})
	}
	return t.modalCh
}

var closedCh = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Modals returns the open modal states.
func (t *Tab) Modals() []*ModalState {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]*ModalState(nil), t.modals...)
}

// clearModal removes a modal state once handled.
func (t *Tab) clearModal(m *ModalState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, x := range t.modals {
		if x == m {
			t.modals = append(t.modals[:i], t.modals[i+1:]...)
			return
		}
	}
}

// AddEvent records an event to report with the next response.
func (t *Tab) AddEvent(text string) {
	t.mu.Lock()
	t.seq++
	t.events = append(t.events, Event{Seq: t.seq, Text: Cut(text)})
	if len(t.events) > 100 {
		t.events = t.events[len(t.events)-100:]
	}
	t.mu.Unlock()
}

// TakeEvents returns the events not yet reported and marks them reported.
func (t *Tab) TakeEvents() []Event {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []Event
	for _, e := range t.events {
		if e.Seq > t.reported {
			out = append(out, e)
		}
	}
	t.reported = t.seq
	return out
}

// Console returns the buffered console messages and page errors; when
// sinceNav is set, only those since the last main-frame navigation.
func (t *Tab) Console(sinceNav bool) []ConsoleEntry {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []ConsoleEntry
	for _, e := range t.console {
		if !sinceNav || e.Seq > t.lastNav {
			out = append(out, e)
		}
	}
	return out
}

// Requests returns the buffered network requests.
func (t *Tab) Requests() []RequestEntry {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]RequestEntry, len(t.requests))
	for i, r := range t.requests {
		out[i] = *r
	}
	return out
}

// pendingSince is the number of requests in flight that started after the
// tab's event counter was at seq.
func (t *Tab) pendingSince(seq int) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, s := range t.inflight {
		if s > seq {
			n++
		}
	}
	return n
}

// startedSince reports whether a request started after the tab's event
// counter was at seq, ended or not.
func (t *Tab) startedSince(seq int) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.requests) > 0 && t.requests[len(t.requests)-1].Seq > seq
}

// netQuietFor reports how long no request started or ended.
func (t *Tab) netQuietFor() time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.netAt.IsZero() {
		return time.Hour
	}
	return time.Since(t.netAt)
}

// Seq is the tab's event counter: it grows with every console message,
// request, navigation and event.
func (t *Tab) Seq() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.seq
}

// LastNavSeq is the Seq of the last main-frame navigation.
func (t *Tab) LastNavSeq() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.lastNav
}

// DOMReady reports whether DOMContentLoaded fired in the current document
// (a same-document navigation keeps it).
func (t *Tab) DOMReady() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.domNav >= t.docNav
}

// The events below are a frame's own, which the typed API does not offer;
// their handlers run on the dispatch goroutine.

// onLoadState adds fn for frame f's "loadstate" events (a load state
// reached: "domcontentloaded", "load").
func onLoadState(f playwright.Frame, fn func(state string)) { emitterOf(f).On("loadstate", fn) }

// onNavigated adds fn for frame f's "navigated" events: ev has "url",
// "newDocument" when a document was committed and "error" when the
// navigation failed.
func onNavigated(f playwright.Frame, fn func(ev map[string]any)) { emitterOf(f).On("navigated", fn) }

// emitterOf is f's event emitter, which every Playwright object has but the
// Frame interface does not show. A frame without one is a programming error
// (a changed playwright-go): it panics rather than lose the events.
func emitterOf(f playwright.Frame) interface{ On(string, any) } {
	e, ok := f.(interface{ On(string, any) })
	if !ok {
		panic(fmt.Sprintf("page: %T has no event emitter", f))
	}
	return e
}

// wakeLocked wakes pollUntil's waiters; t.mu is held.
func (t *Tab) wakeLocked() {
	if t.wakeCh != nil {
		close(t.wakeCh)
		t.wakeCh = nil
	}
}

// woken returns a channel closed at the next change of the tab's load
// state or requests.
func (t *Tab) woken() <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.wakeCh == nil {
		t.wakeCh = make(chan struct{})
	}
	return t.wakeCh
}

// Loaded reports whether the load event fired for the current document.
func (t *Tab) Loaded() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.loadedNav == t.lastNav
}

// Crashed reports whether the page crashed.
func (t *Tab) Crashed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.crashed
}

// Closed reports whether the page was closed.
func (t *Tab) Closed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.closed
}
