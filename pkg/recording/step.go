package recording

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/cloakmcp/cloakbrowser-mcp/snapshot"
)

// Step is one recorded action tool call.
type Step struct {
	// N numbers the step from 1 in its session.
	N int `json:"n"`
	// Tool is the MCP tool that was called.
	Tool string `json:"tool"`
	// Args are the call's arguments with every target left out (Target,
	// Fields hold them) and secrets written ${NAME}.
	Args map[string]any `json:"args,omitempty"`
	// Target is the element of "target" (or "startTarget").
	Target *Target `json:"target,omitempty"`
	// EndTarget is the element of a drag's "endTarget".
	EndTarget *Target `json:"endTarget,omitempty"`
	// Fields are the targets of browser_fill_form's fields, in order.
	Fields []*Target `json:"fields,omitempty"`
	// Error is the tool's error when the call failed; failed steps are
	// never exported.
	Error string `json:"error,omitempty"`
	// After is the page state the recorder read once the step was over.
	After State `json:"after"`
}

// Target is an element as a replay finds it again.
type Target struct {
	// Role and Name are the element's role and accessible name (or its
	// text, for an element without a name) in the snapshot the agent acted
	// on; empty Role when the element had none.
	Role string `json:"role,omitempty"`
	Name string `json:"name,omitempty"`
	// Nth picks the element among those of the same role and name (the
	// smoke runner's matching rule), from 0 in document order; Count is how
	// many there were.
	Nth   int `json:"nth,omitempty"`
	Count int `json:"count,omitempty"`
	// Selector is Playwright's unique selector of the element resolved when
	// the step ran (internal:role=button[name="Save"i] >> nth=1), or the
	// selector the agent passed; empty when none could be had.
	Selector string `json:"selector,omitempty"`
	// Given is what the agent passed (a ref like e12, or a selector), for
	// messages.
	Given string `json:"given,omitempty"`
}

// stable says the target can be found again without the snapshot's ref.
func (t *Target) stable() bool {
	return t != nil && (t.Role != "" && (t.Name != "" || t.Role != "generic") || t.selectorOK())
}

// selectorOK says Selector is usable in a test (not a ref fallback).
func (t *Target) selectorOK() bool {
	return t.Selector != "" && !strings.HasPrefix(t.Selector, "aria-ref=")
}

// String names the target for messages and step names.
func (t *Target) String() string {
	if t == nil {
		return ""
	}
	if t.Role != "" {
		s := t.Role
		if t.Name != "" {
			s += fmt.Sprintf(" %q", t.Name)
		}
		if t.Count > 1 {
			s += fmt.Sprintf(" (%s of %d)", ordinal(t.Nth+1), t.Count)
		}
		return s
	}
	if t.Selector != "" {
		return t.Selector
	}
	return t.Given
}

func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprintf("%d%s", n, suffix)
}

// State is what the page showed after a step.
type State struct {
	URL   string `json:"url"`
	Title string `json:"title,omitempty"`
	// URLChanged and TitleChanged compare with the page before the step.
	URLChanged   bool `json:"urlChanged,omitempty"`
	TitleChanged bool `json:"titleChanged,omitempty"`
	// Appeared are elements present after the step and not before it (all
	// of a new page's), in document order, at most MaxAppeared.
	Appeared []Element `json:"appeared,omitempty"`
}

// MaxAppeared bounds State.Appeared.
const MaxAppeared = 20

// Element is an element of a snapshot by role and label.
type Element struct {
	Role string `json:"role"`
	// Label is the accessible name or, when Text is set, the element's
	// text (a listitem "milk" has no name).
	Label string `json:"label"`
	Text  bool   `json:"text,omitempty"`
	// Count is how many elements of the page had this role and label.
	Count int `json:"count,omitempty"`
}

func (e Element) key() string { return e.Role + "\x00" + e.Label }

// Elements lists the named (or texted) elements of a snapshot tree in
// document order, with how many of each there are.
func Elements(t *snapshot.Tree) []Element {
	if t == nil {
		return nil
	}
	var out []Element
	index := map[string]int{}
	t.Walk(func(n *snapshot.Node, _ int) bool {
		if n.Kind != snapshot.KindElement || n.Role == "" {
			return true
		}
		e := Element{Role: n.Role, Label: n.Name}
		if e.Label == "" {
			e.Label, e.Text = n.Text, true
		}
		if strings.TrimSpace(e.Label) == "" {
			return true
		}
		if i, ok := index[e.key()]; ok {
			out[i].Count++
			return true
		}
		e.Count = 1
		index[e.key()] = len(out)
		out = append(out, e)
		return true
	})
	return out
}

// Appeared are the elements of after that before lacks, at most MaxAppeared
// of those an expectation can name (see expectable).
func Appeared(before, after []Element) []Element {
	had := map[string]bool{}
	for _, e := range before {
		had[e.key()] = true
	}
	var out []Element
	for _, e := range after {
		if had[e.key()] || !expectable(e) {
			continue
		}
		out = append(out, e)
		if len(out) == MaxAppeared {
			break
		}
	}
	return out
}

// expectable says an element is worth an expectation: a role a user sees
// as a thing, a label of a line's length.
func expectable(e Element) bool {
	if rolePriority(e.Role) < 0 || len(e.Label) > 80 || strings.ContainsAny(e.Label, "\n") {
		return false
	}
	return true
}

// rolePriority orders roles for the expectations chosen from what
// appeared: feedback first, then structure, then controls; -1 for roles
// never used (layout, text runs).
func rolePriority(role string) int {
	order := []string{"alert", "status", "heading", "dialog", "alertdialog", "listitem", "row", "cell", "paragraph", "link", "button", "checkbox", "radio", "tab", "option", "menuitem", "textbox", "combobox", "img", "list", "table", "navigation", "main", "region", "form"}
	for i, r := range order {
		if r == role {
			return len(order) - i
		}
	}
	return -1
}

// WriteJSONL writes steps one JSON object a line (the --save-session steps
// log).
func WriteJSONL(w io.Writer, steps ...Step) error {
	for _, s := range steps {
		b, err := json.Marshal(s)
		if err != nil {
			return fmt.Errorf("step %d: %w", s.N, err)
		}
		if _, err := w.Write(append(b, '\n')); err != nil {
			return err
		}
	}
	return nil
}

// ReadJSONL reads a steps log WriteJSONL wrote; name is for errors.
func ReadJSONL(name string, data []byte) ([]Step, error) {
	var steps []Step
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var s Step
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			return nil, fmt.Errorf("%s:%d: not a recorded step (%v): pass the .steps.jsonl file --save-session writes with --caps export", name, line, err)
		}
		steps = append(steps, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return steps, nil
}

// TargetIn describes the element ref names in t (the snapshot the agent
// acted on): its role, its name (or text), and its place among the elements
// the smoke runner would match for them — role equal in any case, label
// equal — so that {role, name, nth} finds it again. nil when t has no
// such ref.
func TargetIn(t *snapshot.Tree, ref string) *Target {
	if t == nil {
		return nil
	}
	n, ok := t.Find(ref)
	if !ok || n.Kind != snapshot.KindElement || n.Role == "" {
		return nil
	}
	label := func(n *snapshot.Node) string {
		if n.Name != "" {
			return n.Name
		}
		return n.Text
	}
	tg := &Target{Role: n.Role, Name: label(n), Given: ref}
	t.Walk(func(m *snapshot.Node, _ int) bool {
		if m.Kind != snapshot.KindElement || !strings.EqualFold(m.Role, n.Role) || tg.Name != "" && label(m) != tg.Name {
			return true
		}
		if m == n {
			tg.Nth = tg.Count
		}
		tg.Count++
		return true
	})
	return tg
}
