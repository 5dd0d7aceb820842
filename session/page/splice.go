// A snapshot after a change that walks only the parts of the page that
// changed, and puts them in the last snapshot's place of them.

package page

import (
	"context"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/mxschmitt/playwright-go"

	"github.com/cloakmcp/cloakbrowser-mcp/session/watch"
	"github.com/cloakmcp/cloakbrowser-mcp/snapshot"
)

// Playwright's walk of a page costs the same whatever changed: the article
// fixture's 46,000 characters took 52.6 ms (median of 12) after a list got
// one item, a walk of that list and its splice 14.9 ms. The
// watch keeps, for each change it counts, the element whose subtree holds
// all the change can alter, stamped with the base before it (watch.js:
// dirt), and since which base nothing else happened (no hover, rule, URL,
// animation or frame change; focus not lost to the page). A read asked
// for parts (partAsk) takes each change's element up to one whose role
// stands on its own, or, where elements whose name their content gives are
// on the way, to the topmost of them when it shows on a line of its own (a
// row, a link, a button, a heading: its name, and so its ref, may have
// changed, so it is found by the ref it had, PartRenamed), else past them
// (a label, a fieldset's legend); an element added among others is a part
// of its own, put beside a sibling's lines (PartAfter, PartBefore); plus
// the element focus moved to, and elements added at the end of the body;
// it drops those another holds and refuses where
// anything outside a part could show the change: a name taken by
// reference or a label's for, aria-owns, a pointer cursor a walk carries
// down from an ancestor, a slot, a frame, the page's root, style sheets
// with :has() or container queries (or :focus, :empty and validity rules
// that show), more than four parts. It sends each part an event of a name
// made per process; the hand-off engine's listeners in Playwright's
// utility world keep them, and "part:" hands them, in document order, to
// a locator; "refs:" first reads, where a part was renamed or inserted,
// the ref it or its sibling had. Playwright's own AI walk of each (the
// same code, options and ref counter as the whole page's) then takes its
// lines' place in the last snapshot (snapshot.Splice), which checks that
// the part is one element of a role its parent never folds, whose ref (or
// the ref it had) is on exactly one line of the last snapshot, goes beside
// its sibling's lines (snapshot.Insert), or goes after the body's last
// lines (snapshot.Append, once the engine said the top line's ref is the
// body's). Refs outside the parts keep what the
// walks gave them; an action reaches them through the ref Playwright
// leaves on each element (partialAI). TestASplicedSnapshotEqualsAWholeWalk
// holds the result to a walk of the whole page.

// partWalksOff turns part walks off (CLOAKBROWSER_MCP_PART_WALKS=off):
// every snapshot after a change walks the whole page, as before them.
var partWalksOff = os.Getenv("CLOAKBROWSER_MCP_PART_WALKS") == "off"

// partMinChars is the size of snapshot below which the page is walked
// whole after a change: a read, a part's walk and its splice cost more
// than Playwright's walk of a page that small (the bench's single-page
// app, 1,118 characters: 11.5 ms with parts, 9.2 ms without, medians of 12;
// its form, 2,181 characters: 12.0 and 15.3 ms).
const partMinChars = 1500

// partAsk is what a read asks for when the tab's last snapshot can take
// in a part of the page: a whole snapshot of this document with a base,
// no frame whose document had not arrived then or now, standing (no frame
// busy then: Snapshot.stands) with none busy now, its focus marks and
// values true, not too small to gain from it; nil otherwise. Frames
// themselves do not stop it: the watch reads same-origin frames' documents
// (a change in one, or a new document, is no part), sends each frame it
// cannot read as a part of its own to walk again, and a part that holds a
// frame is walked with the frame's document (watch.js), which is why no
// part is asked for while a frame's document has not arrived or a frame
// is busy (and splice checks again where a part holds one).
func (t *Tab) partAsk() *watch.Part {
	if partWalksOff || t.frameGaps() != (frameGaps{}) {
		// A frame whose document has not arrived (or that does not
		// answer) shows without content in a whole walk, whatever the
		// last snapshot showed of it.
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.snap
	if s == nil || t.snapBase == 0 || t.snapMarksOff || s.doc != t.docNav || t.watchDoc != t.docNav ||
		s.FramesNotLoaded > 0 || !s.stands() || !t.watchable() || len(s.Text) < partMinChars {
		return nil
	}
	return &watch.Part{Since: t.snapBase, Event: partEvent}
}

// toldNoPart reports whether the watch told of a change after its last
// read and said no part can hold the changes since since.
func (t *Tab) toldNoPart(since int) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.toldNew && t.lastTell.NoPart != "" && since <= t.lastTell.From
}

// splice is the page's snapshot made from walks of the parts of it read r
// found (nil when r found none, or a part does not fit the last snapshot:
// the caller walks the whole page).
func (t *Tab) splice(ctx context.Context, r *watchRead) *Snapshot {
	if r == nil || (r.Parts == 0 && !r.PartBody) {
		if r != nil && r.NoPart != "" {
			t.c.env.Log.Debug().Int("tab", t.ID).Str("why", r.NoPart).Msg("snapshot: no part to walk")
		}
		return nil
	}
	t.mu.Lock()
	last := t.snap
	ok := last != nil && r.doc == t.docNav && last.doc == t.docNav && !t.snapMarksOff
	t.mu.Unlock()
	if !ok {
		return nil
	}
	if r.PartFrames && t.frameGaps() != (frameGaps{}) {
		// A frame added since partAsk looked, held by a part: the part's
		// walk would wait for it within its own budget; the page's walk
		// gives it the short frame budget.
		t.c.env.Log.Debug().Int("tab", t.ID).Msg("snapshot: a part holds a frame, and a frame is not loaded or busy; walking the page")
		return nil
	}
	start := time.Now()
	text, walked := last.Text, 0
	if r.PartFocus {
		// Focus moved into a part: its walk brings the one mark.
		text = snapshot.ActiveOff(text)
	}
	kind := func(i int) int {
		if i < len(r.PartKinds) {
			return r.PartKinds[i]
		}
		return watch.PartReplace
	}
	bodyRef, topIsBody := "", false
	appended := slices.Contains(r.PartKinds, watch.PartAppend)
	if appended || r.PartBody {
		// Parts added at the end of the body go after the last lines:
		// only where the one top line is the body's. Focus on the body
		// marks its line, where there is one (Playwright shows no body
		// line where the body holds one element: no mark then).
		first, _, _ := strings.Cut(text, "\n")
		_, bodyRef = snapshot.LineKey(first)
		var err error
		if bodyRef != "" {
			var n int
			n, err = t.count(ctx, t.handoff("isbody", bodyRef))
			topIsBody = err == nil && n == 1
		}
		if err != nil || (appended && !topIsBody) {
			t.c.env.Log.Debug().Int("tab", t.ID).Msg("snapshot: the last snapshot's top is not the body; walking the page")
			return nil
		}
	}
	var was []string
	renamed, inserted, gone := 0, 0, 0
	for i := range r.Parts {
		switch kind(i) {
		case watch.PartRenamed:
			renamed++
		case watch.PartGone:
			gone++
		case watch.PartAfter, watch.PartBefore:
			inserted++
		}
	}
	if renamed+inserted+gone > 0 {
		// A part whose name may have changed, or that shows nothing now, is
		// found by the ref it had, an inserted one beside its sibling's:
		// read before the walks give them others.
		refs, err := call(ctx, t.c, "snapshot", stopOn{modal: t, busyOK: true}, func() (string, error) {
			return t.handoff("refs", "").TextContent()
		})
		was = strings.Fields(refs)
		if err != nil || len(was) != r.Parts {
			t.c.env.Log.Debug().Int("tab", t.ID).Err(err).Msg("snapshot: the parts' refs were not read; walking the page")
			return nil
		}
	}
	// Where a part inserted after the part before it ("^") goes: after
	// that part's top line, or where that part would have gone when it
	// showed nothing.
	prevRef, prevBefore := "", false
	for i := range r.Parts {
		timeout := snapshotBudget(ctx)
		opts := playwright.LocatorAriaSnapshotOptions{Mode: playwright.AriaSnapshotModeAi, Timeout: &timeout}
		part, err := call(ctx, t.c, "snapshot", stopOn{modal: t, busyOK: true}, func() (string, error) {
			return t.handoff("part", "").AriaSnapshot(opts)
		})
		if err != nil {
			t.c.env.Log.Debug().Int("tab", t.ID).Err(err).Msg("snapshot: a part's walk failed; walking the page")
			return nil
		}
		top := ""
		switch k := kind(i); k {
		case watch.PartAppend:
			text, err = snapshot.Append(text, part, bodyRef)
		case watch.PartAfter, watch.PartBefore:
			at, before := was[i], k == watch.PartBefore
			if at == "^" {
				at, before = prevRef, prevBefore
			}
			if at == "-" || at == "" {
				t.c.env.Log.Debug().Int("tab", t.ID).Msg("snapshot: an inserted part's sibling has no ref; walking the page")
				return nil
			}
			if strings.TrimSpace(part) == "" {
				// It shows nothing: the next goes where it would have.
				prevRef, prevBefore = at, before
				continue
			}
			text, top, err = snapshot.Insert(text, part, at, before)
		case watch.PartGone:
			if strings.TrimSpace(part) != "" || was[i] == "-" {
				t.c.env.Log.Debug().Int("tab", t.ID).Msg("snapshot: a part hidden now showed lines or had no ref; walking the page")
				return nil
			}
			text, err = snapshot.Remove(text, was[i])
			top = was[i]
		default:
			at := ""
			if k == watch.PartRenamed {
				if at = was[i]; at == "-" {
					t.c.env.Log.Debug().Int("tab", t.ID).Msg("snapshot: a renamed part had no ref; walking the page")
					return nil
				}
			}
			text, err = snapshot.Splice(text, part, at)
		}
		if err != nil {
			t.c.env.Log.Debug().Int("tab", t.ID).Err(err).Msg("snapshot: a part does not fit; walking the page")
			return nil
		}
		if top == "" {
			first, _, _ := strings.Cut(part, "\n")
			_, top = snapshot.LineKey(first)
		}
		prevRef, prevBefore = top, false
		walked += len(part)
	}
	if r.PartBody && topIsBody {
		var err error
		if text, err = snapshot.ActiveOnTop(text); err != nil {
			t.c.env.Log.Debug().Int("tab", t.ID).Err(err).Msg("snapshot: a part does not fit; walking the page")
			return nil
		}
	}
	t.c.env.Log.Debug().Int("tab", t.ID).Int("parts", r.Parts).Int("renamed", renamed).Int("inserted", inserted).Int("part_chars", walked).Int("gone", gone).Int("chars", len(text)).
		Int64("ms", time.Since(start).Milliseconds()).Msg("snapshot: walked only the parts that changed")
	return t.keepSnapshot(ctx, text, frameGaps{}, true, r.NewBase, true)
}
