// Package watch is the change detector of a page: a script that runs in an
// isolated world of the page's main frame and tells, in one cheap call,
// whether the page changed since a base it marked (the last AI snapshot).
// The facade (session/page) creates the world over a tab's CDP session,
// evaluates Expression there and decodes the answer with Decode; this
// package holds the script (watch.js) and what its answer means; it
// imports nothing of the session (session/page → watch).
//
// The watch tells whether a page changed since its last AI snapshot, for
// one cheap call instead of a new snapshot: the after-action snapshot of an
// action that changed nothing is skipped, and a repeated snapshot of an
// unchanged page is served from the last one.
//
// It lives in an isolated world of the page's main frame (created over the
// tab's CDP session): the page's own scripts can neither see it nor hook
// the DOM APIs it uses. Per document it keeps a MutationObserver (DOM,
// attributes, text — in the document, every open shadow root and every
// same-origin frame) and, at each read, compares with its base (the state
// when the last snapshot was taken):
//   - form controls' values, checked and selected states (properties, which
//     no mutation reports);
//   - the focused element (shadow roots and same-origin frames included);
//   - the :hover chain, when a style sheet can show or hide on :hover (or
//     cannot be read: a cross-origin sheet); a base taken with nothing
//     under the pointer does not read the rules, and a pointer that comes
//     onto something later is a change unless every such rule needs an
//     element under the pointer to match;
//   - running animations and transitions of display, visibility, content
//     or cursor;
//   - the number of style sheets and rules (CSSOM insertions), new shadow
//     roots and frame documents, and location.href;
//   - popovers toggling.
//
// Mutations no AI snapshot can show are not counted: comments; what happens
// inside script, noscript and template elements; scripts, noscripts,
// templates and resource hints (preload, prefetch, preconnect,
// dns-prefetch, modulepreload) added to or removed from a head the page
// does not show; and data-* attributes that no style sheet of the document,
// its open shadow roots or its same-origin frames names (in a selector or
// attr(); every sheet readable), on elements that are not custom ones and
// whose own style attribute has no attr() (Chromium reads attributes into
// any property there); on such elements, a class attribute that gained or
// lost only classes that no rule able to change a walk names (a rule that
// sets display, visibility, content, cursor, a size, a transform, an
// animation, a custom property and the like; one that only colours, fades,
// shadows or spaces cannot), where no such rule reads the class attribute
// itself ([class…], attr()) and every sheet is readable: a font loader's
// class on the root, a lazy loader's fade-in, a scrolled header's shadow.
// Playwright's walk skips those elements, never reads comments, data-*
// attributes or classes (it sees only what CSS makes of them), so a page
// whose analytics and loaders keep doing these things is still served its
// last snapshot.
//
// The page's URL is not what a walk reads: links show their href
// attribute as written, and CSS sees the URL only as the element its
// fragment names (:target). So a new URL of the same document (pushState,
// replaceState, a router's new path) counts only as a new fragment where a
// :target rule that can show exists (Read.URL), and the watch's bases hold
// across same-document navigations (the tab keeps them): a route change
// walks only the parts the router re-rendered.
//
// A shadow root the watch finds since its last base (a component added,
// with a root attached as it was made, or one upgraded in place when its
// definition came, which no mutation record tells) is a change of its host:
// a part walk covers the host, where it used to break the chain and walk
// the whole page. Its blind spots are the watch's own:
// a closed shadow root (whose :host rule could name a built-in host's
// data-* attribute), and a rule's selector rewritten in place through the
// CSSOM (the sheet keeps the same rule objects, by which its names are
// kept; an insertRule, deleteRule or replaceSync is seen).
//
// A frame the watch cannot enter (cross-origin, sandboxed) counts as a
// change (Read.Foreign), unless it is of another site, in a renderer of its
// own, where the facade runs this same script in the frame's document and
// reads it beside (session/page: framewatch.go). A page in a tab that was
// also driven by other means (browser_evaluate, a resize, emulation, the
// CDP proxy) is always snapshotted.
//
// Reading also marks a new base, and every read says which base it
// compared with: a snapshot stands on the base marked just before it, so a
// change that lands between the mark and the snapshot only costs a new
// snapshot next time, never a missed one.
//
// The watch also tells (Binding, a binding the server adds to its world
// only, over the same CDP session): at the first counted change since the
// last read it marks a new base — the page as it is right after the change —
// and calls the binding with the base it left and the one it marked
// (ParseTell). It tells once between reads, so a page that keeps changing
// costs one scan and one event per read at most. Told, the server knows
// two things without a round trip: a snapshot asked for next walks the page
// at once (the walk comes after the marked base, as the tell came before
// it; a read beside it marks nothing; so does one that walks whatever the
// watch says, after the newest base the server knows), and, while nothing
// was told since a
// snapshot whose base is the newest mark, the snapshot's elements are all
// still in the page, so an action on one of its refs need not look the ref
// up first. A tell still on its way when the server decides is not known:
// the snapshot then stands on its read as before, and an action whose
// element went times out and is then told the ref went. A read never
// tells: it reports what it counted.
//
// After a tell the watch also works ahead of the walk that usually
// follows: once the page has made no change for 40 ms, it asks every form
// control of a document with many of them for its labels (element.labels).
// Playwright's walk asks for them as it names each control and each row,
// cell or other element named from content around it, and Blink answers
// each by a pass over the whole document, kept only until the document next
// changes: on the bench's table (3,008 controls, 12,000 elements) that was
// 470 of a 1,250 ms walk after a change. It does so at most once per read,
// not after a read came, and only where controls × elements ≥ 10⁶; it
// tells the server how many it asked (a Tell with Primed), which logs it.
// Reading labels changes nothing in the page; the waits are
// scheduler.postTask delays, which take no timer id from the page's own.
package watch
