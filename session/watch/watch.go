package watch

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf16"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/clip"
)

// World names the isolated world the watch runs in.
const World = "cbm"

// Binding is the binding the server adds to the watch's world (and to no
// other: the page never sees it), through which the watch tells of the
// first change since the last read (ParseTell).
const Binding = "__cbmTell"

// Tell is what the watch told through Binding: the page left base From
// and the watch marked base To as it was right after the change; Title is
// the page's title then (told again, with the same bases, when it changes).
// A tell with Primed and no bases says instead that the watch asked that
// many form controls for their labels ahead of a walk (watch.js: prime).
//
// NoPart, when set, says why no part of the page can hold the changes since
// From (nor since any earlier base), so a snapshot walks the whole page
// (watch.js: partRoots).
type Tell struct {
	From   int    `json:"f"`
	To     int    `json:"t"`
	Title  string `json:"n"`
	Primed int    `json:"p"`
	NoPart string `json:"np"`
}

// ParseTell reads a Binding call's payload.
func ParseTell(payload string) (Tell, bool) {
	var k Tell
	if err := json.Unmarshal([]byte(payload), &k); err != nil {
		return Tell{}, false
	}
	if k.Primed > 0 && k.From == 0 && k.To == 0 {
		return k, true
	}
	if k.Primed != 0 || k.From == 0 || k.To <= k.From {
		return Tell{}, false
	}
	return k, true
}

// script is the watch: an async function of (mark, afterAction, part)
// returning the read as a JSON-able object (watch.js). It keeps itself in
// its world as __cbmRead.
//
//go:embed watch.js
var script string

// Part asks a read for the element a walk of only the part of the page
// that changed since base Since must cover (watch.js: partRoots): the read
// sends, from each such element, an event named Event, then Event+"n"
// (which the hand-off engine's listeners in Playwright's utility world
// keep), and says how many (Read.Parts); else it says why not
// (Read.NoPart).
type Part struct {
	Since int    `json:"since"`
	Event string `json:"ev"`
	// Stood, when it is the number of sealed frames the read finds, says
	// they all changed nowhere since the last snapshot (their own
	// watches' reads): no part walks them again.
	Stood int `json:"st,omitempty"`
}

func (p *Part) arg() string {
	if p == nil {
		return "null"
	}
	b, _ := json.Marshal(p)
	return string(b)
}

// Expression is the watch called once: mark is whether to mark a new base;
// afterAction whether to let the page's queued tasks run first (after an
// action: the updates its handlers left to a zero timer or a microtask);
// part, if not nil, what Part says.
func Expression(mark, afterAction bool, part *Part) string {
	return fmt.Sprintf("%s(%t, %t, %s)", strings.TrimRight(script, "\n"), mark, afterAction, part.arg())
}

// Call is Expression for a world where Expression ran before: it calls the
// watch that run kept, sending its name rather than its 12 kB (a read of
// the article fixture's page over CDP: 1.3 ms instead of 1.8), and answers
// null where there is none (Decode: ErrNotInstalled).
func Call(mark, afterAction bool, part *Part) string {
	return fmt.Sprintf("typeof __cbmRead === 'function' ? __cbmRead(%t, %t, %s) : null", mark, afterAction, part.arg())
}

// ErrNotInstalled means a Call found no watch in its world: send Expression.
var ErrNotInstalled = errors.New("watch: not installed in this world")

// Read is what one read of the watch says.
type Read struct {
	Title    string  `json:"t"`
	Foreign  int     `json:"x"`  // frames the watch cannot enter
	Sealed   int     `json:"s"`  // of them, those of the document's own tree (not in a shadow root or another frame)
	Base     int     `json:"b"`  // the base this read compared with (0: none yet)
	NewBase  int     `json:"nb"` // the base it marked (0: none)
	Muts     int     `json:"m"`  // mutations since the base
	Controls int     `json:"c"`  // form controls whose state changed
	Value    *string `json:"v"`  // the one changed control's value, hashed
	ValueFoc bool    `json:"vf"` // that control has the focus
	Focus    bool    `json:"f"`
	FocusHov bool    `json:"fh"` // focus moved to an element under the pointer
	Hover    bool    `json:"h"`
	Anim     bool    `json:"a"`
	Rules    bool    `json:"r"`
	URL      bool    `json:"u"` // the URL changed so a walk can show it: a new fragment under a :target rule
	// Parts: how many elements a Part asked for were sent its events, in
	// turn (the first holds the changes, or the element focus moved to;
	// a second, that element); PartFocus: focus moved since that base (a
	// part holds the element it moved to, and the focus marks outside the
	// parts are off); NoPart: why no element was sent.
	Parts     int    `json:"p"`
	PartFocus bool   `json:"pf"`
	NoPart    string `json:"pw"`
	// PartBody: focus is on the body now (lost to the page): the body's
	// line, where the last snapshot's top line is the body's, takes the
	// focus mark. Parts may be 0 then.
	PartBody bool `json:"pb"`
	// PartFrames: a part holds an iframe (not a sealed frame walked as a
	// part of its own): its walk walks the frame's document too, so the
	// server walks the page instead while a frame's document has not
	// arrived or a frame is busy.
	PartFrames bool `json:"pfr"`
	// PartKinds says, per part, how its lines go in the last snapshot
	// (PartReplace and the rest); nil for all PartReplace.
	PartKinds []int `json:"pk"`
}

// The kinds of part (watch.js: partRoots).
const (
	// PartReplace: an element whose lines the part replaces, found by
	// its ref.
	PartReplace = 0
	// PartAppend: an element added at the end of the body since the base;
	// its lines go after the last snapshot's.
	PartAppend = 1
	// PartRenamed: an element whose name its content gives, which may
	// have changed; its lines are found by the ref it had.
	PartRenamed = 2
	// PartAfter and PartBefore: an element added among others; its lines
	// go after the lines of its previous sibling (or of the part before
	// it), or before those of its next sibling.
	PartAfter  = 3
	PartBefore = 4
	// PartGone: an element that shows nothing now (display: none); its
	// lines, found by its ref, go.
	PartGone = 5
)

// SameAs reports whether the page is as it was at base.
func (r *Read) SameAs(base int) bool {
	return r.QuietSince(base) && r.Controls == 0 && !r.Focus
}

// ClickedOnly is SameAs but for focus moving to the element under the
// pointer: what a click on it does, which an after-action diff leaves out.
func (r *Read) ClickedOnly(base int) bool {
	return r.QuietSince(base) && r.Controls == 0 && (!r.Focus || r.FocusHov)
}

// QuietSince is SameAs but for form controls and focus.
func (r *Read) QuietSince(base int) bool {
	return base != 0 && r.Base == base && r.Foreign == 0 && r.Muts == 0 &&
		!r.Hover && !r.Anim && !r.Rules && !r.URL
}

// OnlyTyped reports whether the one change since base is text in the
// focused field: its value is now text.
func (r *Read) OnlyTyped(base int, text string) bool {
	return r.QuietSince(base) && r.Controls == 1 && r.Value != nil && *r.Value == ValueHash(text) &&
		(!r.Focus || r.ValueFoc)
}

// ValueHash is the watch's hash of a value: FNV-1a over its UTF-16 code
// units, then its length in them.
func ValueHash(s string) string {
	units := utf16.Encode([]rune(s))
	h := uint32(0x811c9dc5)
	for _, u := range units {
		h ^= uint32(u)
		h *= 0x01000193
	}
	return fmt.Sprintf("%x:%d", h, len(units))
}

// Decode reads the answer of Runtime.evaluate of Expression or Call (by
// value).
func Decode(res any) (*Read, error) {
	m, _ := res.(map[string]any)
	if ex, ok := m["exceptionDetails"]; ok {
		b, _ := json.Marshal(ex)
		return nil, fmt.Errorf("watch: %s", clip.Short(clip.FirstLine(string(b))))
	}
	inner, _ := m["result"].(map[string]any)
	if inner["subtype"] == "null" {
		return nil, ErrNotInstalled
	}
	b, err := json.Marshal(inner["value"])
	if err != nil {
		return nil, err
	}
	var r Read
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	return &r, nil
}
