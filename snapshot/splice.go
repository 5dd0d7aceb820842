package snapshot

import (
	"errors"
	"strings"
)

// Splice puts part, Playwright's AI snapshot of one element, in place of
// that element's lines in whole, the last AI snapshot of its page, and
// returns the page's snapshot. The element is found by its ref: part's
// first line is the element's own (the only line at its depth), and whole
// holds exactly one line with that ref (or was) and that role; its lines are that
// line and the deeper ones after it. Only an element of a role the AI
// snapshot never unwraps, drops or folds into its parent qualifies (not a
// generic, an image, a frame or text), so its lines stand for it alone and
// nothing outside them depends on what they hold, but for one thing a
// line above them gives: under a line with the cursor mark the part's
// lines lose theirs (fitCursor), as a walk of the whole page renders them.
// When focus moved into a part, the caller takes the old focus marks off
// first (ActiveOff).
//
// was is the ref the element had in whole when its name, and so its ref,
// may have changed since ("" when the part's own ref is it).
//
// The caller vouches that nothing outside the element changed since whole
// was taken, and that was (or the part's ref) is the element's in whole: a
// ref Playwright gives one element only; Splice checks only the shape.
func Splice(whole, part, was string) (string, error) {
	pl, role, ref, err := oneElement("splice", strings.TrimRight(part, "\n"), true)
	if err != nil {
		return "", err
	}
	if ref == "" {
		return "", errors.New("splice: the part's element has no ref")
	}
	if was != "" {
		ref = was
	}
	wl := strings.Split(whole, "\n")
	at, err := lineOf("splice", wl, ref)
	if err != nil {
		return "", err
	}
	if r, _ := LineKey(wl[at]); r != role {
		return "", errors.New("splice: the element's line in the page's snapshot is of another role")
	}
	depth, end := indentOf(wl[at]), subtreeEnd(wl, at)
	if pl, err = fitCursor("splice", pl, wl, at); err != nil {
		return "", err
	}
	pad := strings.Repeat(" ", depth)
	var b strings.Builder
	b.Grow(len(whole) + len(part))
	put := func(l string) {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l)
	}
	for _, l := range wl[:at] {
		put(l)
	}
	for _, l := range pl {
		put(pad + l)
	}
	for _, l := range wl[end:] {
		put(l)
	}
	return b.String(), nil
}

// Insert puts part, Playwright's AI snapshot of an element added among
// others, beside the lines of the element whose ref is anchor in whole
// (exactly one line holds it), at that line's depth: before that line when
// before is set, else after the lines under it. It returns the page's
// snapshot and the ref of the part's top line ("" for none). An empty part
// (the element shows nothing) leaves whole as it was. The caller vouches
// that the two are siblings, each on a line of its own, and that nothing
// else changed; Insert refuses a part that is not one element of a role
// its parent never folds.
func Insert(whole, part, anchor string, before bool) (string, string, error) {
	part = strings.TrimRight(part, "\n")
	if part == "" {
		return whole, "", nil
	}
	pl, _, ref, err := oneElement("insert", part, false)
	if err != nil {
		return "", "", err
	}
	if anchor == "" {
		return "", "", errors.New("insert: no sibling to put the part beside")
	}
	wl := strings.Split(whole, "\n")
	at, err := lineOf("insert", wl, anchor)
	if err != nil {
		return "", "", err
	}
	if pl, err = fitCursor("insert", pl, wl, at); err != nil {
		return "", "", err
	}
	pos := at
	if !before {
		pos = subtreeEnd(wl, at)
	}
	pad := strings.Repeat(" ", indentOf(wl[at]))
	out := make([]string, 0, len(wl)+len(pl))
	out = append(out, wl[:pos]...)
	for _, l := range pl {
		out = append(out, pad+l)
	}
	out = append(out, wl[pos:]...)
	return strings.Join(out, "\n"), ref, nil
}

// Remove takes the lines of the element whose ref is ref in whole (exactly
// one line holds it) away, with the lines under it: the element shows
// nothing now. Refused where the AI rendering would then change the lines
// around it: none or one text line left under the parent (it would go on
// the parent's line), a generic parent below the top left with fewer than
// two elements (it would be unwrapped), or text lines on both sides (they
// would run together).
func Remove(whole, ref string) (string, error) {
	wl := strings.Split(whole, "\n")
	at, err := lineOf("remove", wl, ref)
	if err != nil {
		return "", err
	}
	d, end := indentOf(wl[at]), subtreeEnd(wl, at)
	parent := -1
	for i := at - 1; i >= 0; i-- {
		if indentOf(wl[i]) < d {
			parent = i
			break
		}
	}
	if parent < 0 {
		return "", errors.New("remove: the element's line is at the top")
	}
	// The parent's other child lines, and the element's neighbours.
	var kids []int
	prev, next := -1, -1
	for i := parent + 1; i < len(wl) && indentOf(wl[i]) > indentOf(wl[parent]); i++ {
		if indentOf(wl[i]) != d || i == at {
			continue
		}
		kids = append(kids, i)
		if i < at {
			prev = i
		} else if next < 0 {
			next = i
		}
	}
	isText := func(i int) bool { r, _ := LineKey(wl[i]); return r == "text" }
	if len(kids) == 0 || (len(kids) == 1 && isText(kids[0])) {
		return "", errors.New("remove: the parent would be left with no line or one text line")
	}
	// A generic below the top is unwrapped when it holds one element or
	// none: it must keep two.
	if r, _ := LineKey(wl[parent]); (r == "" || r == "generic") && indentOf(wl[parent]) > 0 {
		elems := 0
		for _, i := range kids {
			if !isText(i) {
				elems++
			}
		}
		if elems < 2 {
			return "", errors.New("remove: the generic parent would hold fewer than two elements")
		}
	}
	if prev >= 0 && next >= 0 && isText(prev) && isText(next) {
		return "", errors.New("remove: text on both sides would run together")
	}
	return strings.Join(append(wl[:at:at], wl[end:]...), "\n"), nil
}

// Append adds part, Playwright's AI snapshot of an element added at the end
// of the page's body, after the last lines of whole, the page's last AI
// snapshot, whose one top line must be the body's own (bodyRef: the caller
// checked the ref is the body's), with children. The part's top lines
// become the body's last children. Refused where the body's last child line
// is text (it may be the body's ::after content, which comes after any
// child, or run into the part's text) or the part starts with text (it
// would run into the body's).
func Append(whole, part, bodyRef string) (string, error) {
	part = strings.TrimRight(part, "\n")
	if part == "" {
		return whole, nil
	}
	wl := strings.Split(whole, "\n")
	if _, ref := LineKey(wl[0]); ref != bodyRef || indentOf(wl[0]) != 0 || !strings.HasSuffix(wl[0], ":") || len(wl) < 2 {
		return "", errors.New("append: the page's snapshot does not start with the body's line")
	}
	last := ""
	for _, l := range wl[1:] {
		switch d := indentOf(l); {
		case d == 0:
			return "", errors.New("append: the page's snapshot has more than the body at its top")
		case d == 2:
			last = l
		}
	}
	if strings.HasPrefix(last, "  - text:") {
		return "", errors.New("append: the body's last child is text")
	}
	pl := strings.Split(part, "\n")
	if hasMark(wl[0], cursorMark) {
		var err error
		if pl, err = cursorOff("append", pl); err != nil {
			return "", err
		}
	}
	if r, _ := LineKey(pl[0]); r == "text" || !strings.HasPrefix(pl[0], "- ") {
		return "", errors.New("append: the part starts with text")
	}
	var b strings.Builder
	b.Grow(len(whole) + len(part) + 2*len(pl))
	b.WriteString(whole)
	for _, l := range pl {
		b.WriteString("\n  ")
		b.WriteString(l)
	}
	return b.String(), nil
}

// LineKey is the role and the ref of a snapshot line ("- role "name"
// [ref=e4]: …", the key YAML-quoted when it must be); "" for what it
// lacks. The ref is read from the marks after the name, never from the
// name or the text after the key.
func LineKey(l string) (role, ref string) {
	s := strings.TrimLeft(l, " ")
	if !strings.HasPrefix(s, "- ") {
		return "", ""
	}
	s = s[2:]
	if strings.HasPrefix(s, "'") {
		// A single-quoted key: up to the quote not doubled.
		var k strings.Builder
		i := 1
		for i < len(s) {
			if s[i] == '\'' {
				if i+1 < len(s) && s[i+1] == '\'' {
					k.WriteByte('\'')
					i += 2
					continue
				}
				break
			}
			k.WriteByte(s[i])
			i++
		}
		s = k.String()
	}
	end := strings.IndexAny(s, " :")
	if end < 0 {
		end = len(s)
	}
	role, s = s[:end], s[end:]
	if strings.HasPrefix(s, ` "`) {
		// The name, a JSON string: past its closing quote.
		i := 2
		for i < len(s) && s[i] != '"' {
			if s[i] == '\\' {
				i++
			}
			i++
		}
		s = s[min(i+1, len(s)):]
	}
	for strings.HasPrefix(s, " [") {
		j := strings.IndexByte(s, ']')
		if j < 0 {
			break
		}
		if m, ok := strings.CutPrefix(s[:j], " [ref="); ok {
			ref = m
		}
		s = s[j+1:]
	}
	return role, ref
}

// oneElement splits part, Playwright's AI snapshot of one element, into
// lines, and gives its top line's role and ref; an error (prefixed op)
// unless it is one element at its top, of a role its parent never unwraps,
// drops or folds (not a generic, an image or text), and not a frame unless
// frame: a frame's lines replace its own (the frame's document, walked
// again), where its parent's rendering does not depend on them; a frame
// is never put among others.
func oneElement(op, part string, frame bool) (pl []string, role, ref string, err error) {
	pl = strings.Split(part, "\n")
	if !strings.HasPrefix(pl[0], "- ") {
		return nil, "", "", errors.New(op + ": the part does not start with its element's line")
	}
	for _, l := range pl[1:] {
		if !strings.HasPrefix(l, "  ") {
			return nil, "", "", errors.New(op + ": the part has more than one element at its top")
		}
	}
	role, ref = LineKey(pl[0])
	switch role {
	case "iframe":
		if frame {
			break
		}
		fallthrough
	case "", "generic", "img", "text":
		return nil, "", "", errors.New(op + ": the part's element is of a role its parent can fold (" + role + ")")
	}
	return pl, role, ref, nil
}

// lineOf is the index of the one line of wl whose key holds ref; an error
// (prefixed op) when none or more than one does.
func lineOf(op string, wl []string, ref string) (int, error) {
	at := -1
	for i, l := range wl {
		if _, f := LineKey(l); f == ref {
			if at >= 0 {
				return -1, errors.New(op + ": the ref " + ref + " is on more than one line of the page's snapshot")
			}
			at = i
		}
	}
	if at < 0 {
		return -1, errors.New(op + ": the ref " + ref + " is not in the page's snapshot")
	}
	return at, nil
}

// pointerAbove tells whether a line above wl[at] that holds it (a line of
// less indent, each nearer one holding the next) carries the cursor mark:
// lines under it then carry none.
func pointerAbove(wl []string, at int) bool {
	d := indentOf(wl[at])
	for i := at - 1; i >= 0 && d > 0; i-- {
		if di := indentOf(wl[i]); di < d {
			if hasMark(wl[i], cursorMark) {
				return true
			}
			d = di
		}
	}
	return false
}

// fitCursor is cursorOff where the part's lines go under wl[at]'s place
// and a line above it carries the cursor mark; else pl as it is.
func fitCursor(op string, pl []string, wl []string, at int) ([]string, error) {
	if !pointerAbove(wl, at) {
		return pl, nil
	}
	return cursorOff(op, pl)
}

// cursorOff takes the cursor marks off a part's lines that go under a line
// carrying one, as a walk of the whole page renders them. Refused (an
// error prefixed op) where a line of the part with the mark is an empty
// generic or a nameless image with nothing under it: Playwright keeps
// those only where no line above carries the mark (its click target
// roots), so the whole page's walk drops them there.
func cursorOff(op string, pl []string) ([]string, error) {
	out := make([]string, len(pl))
	for i, l := range pl {
		out[i] = markOff(l, cursorMark)
		if out[i] != l && bareTarget(l) {
			return nil, errors.New(op + ": under a pointer, a part holds a click target the page's walk drops")
		}
	}
	return out, nil
}

// subtreeEnd is the index past wl[at] and the deeper lines after it.
func subtreeEnd(wl []string, at int) int {
	end := at + 1
	for end < len(wl) && indentOf(wl[end]) > indentOf(wl[at]) {
		end++
	}
	return end
}

// hasMark tells whether a line's key carries mark.
func hasMark(l, mark string) bool { return markAt(l, mark) >= 0 }

// bareTarget tells whether a line is a generic's or an image's with no
// name and nothing after its marks.
func bareTarget(l string) bool {
	role, _ := LineKey(l)
	if role != "generic" && role != "img" {
		return false
	}
	s := strings.TrimLeft(l, " ")
	s = strings.TrimPrefix(s[2:], role)
	for strings.HasPrefix(s, " [") {
		j := strings.IndexByte(s, ']')
		if j < 0 {
			return false
		}
		s = s[j+1:]
	}
	return s == ""
}

// ActiveOnTop puts the focus mark on text's first line (the body's, when
// focus is on the body), before its ref, as Playwright renders it.
func ActiveOnTop(text string) (string, error) {
	first, rest, more := strings.Cut(text, "\n")
	if hasMark(first, activeMark) {
		return text, nil
	}
	_, ref := LineKey(first)
	mark := " [ref=" + ref + "]"
	// The key's mark comes after its name, which may read like one: the
	// last that ends the key or comes before another mark.
	i := -1
	for to := len(first); ref != ""; {
		j := strings.LastIndex(first[:to], mark)
		if j < 0 {
			break
		}
		if endsMark(first[j+len(mark):]) {
			i = j
			break
		}
		to = j
	}
	if i < 0 {
		return "", errors.New("splice: the top line has no ref to mark")
	}
	first = first[:i] + activeMark + first[i:]
	if !more {
		return first, nil
	}
	return first + "\n" + rest, nil
}

// ActiveOff takes every focus mark off text (focus moved to an element
// whose lines come anew).
func ActiveOff(text string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = activeOff(l)
	}
	return strings.Join(lines, "\n")
}

func indentOf(l string) int {
	return len(l) - len(strings.TrimLeft(l, " "))
}

// activeMark is the focus mark of the focused element's line.
const activeMark = " [active]"

// activeOff takes a line's focus mark off.
func activeOff(l string) string { return markOff(l, activeMark) }

// cursorMark is the mark of an element with a ref and a pointer cursor;
// Playwright's AI rendering leaves it off every line under such a line.
const cursorMark = " [cursor=pointer]"

// endsMark tells whether rest, what follows a mark on a line, ends the
// mark: the key's end, its colon (a quoted key's closing quote) or another
// mark.
func endsMark(rest string) bool {
	return rest == "" || rest[0] == ':' || rest[0] == '\'' || strings.HasPrefix(rest, " [")
}

// markAt is where mark stands on a line's key (before another mark, the
// key's end or its colon), or -1.
func markAt(l, mark string) int {
	for from := 0; ; {
		i := strings.Index(l[from:], mark)
		if i < 0 {
			return -1
		}
		i += from
		if endsMark(l[i+len(mark):]) {
			return i
		}
		from = i + len(mark)
	}
}

// markOff takes a mark off a line's key (markAt).
func markOff(l, mark string) string {
	if i := markAt(l, mark); i >= 0 {
		return l[:i] + l[i+len(mark):]
	}
	return l
}
