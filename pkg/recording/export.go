package recording

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/cloakmcp/cloakbrowser-mcp/codegen"
)

// Format is what Export writes.
type Format string

// Formats.
const (
	Smoke      Format = "smoke"
	TypeScript Format = "typescript"
	Python     Format = "python"
	Java       Format = "java"
	CSharp     Format = "csharp"
)

// Formats lists every Format.
func Formats() []Format { return []Format{Smoke, TypeScript, Python, Java, CSharp} }

// ParseFormat checks a format name.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats() {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("unknown format %q: use smoke, typescript, python, java or csharp", s)
}

// Assertion is a check an agent adds to a step.
type Assertion struct {
	// Step is the step it follows (its N).
	Step int `json:"step"`
	// One of: an element by Role and Name (name or text), a Text visible on
	// the page, the URL, the Title.
	Role  string `json:"role,omitempty"`
	Name  string `json:"name,omitempty"`
	Text  string `json:"text,omitempty"`
	URL   string `json:"url,omitempty"`
	Title string `json:"title,omitempty"`
}

// Options shape an export. The zero value exports every successful step
// as a smoke scenario named "session".
type Options struct {
	Format Format
	// Name names the scenario or test. If empty, "session".
	Name string
	// From and To bound the steps exported (their N, inclusive); zero
	// means the first and the last.
	From, To int
	// Keep, if not empty, exports only these steps (their N).
	Keep []int
	// Assertions are added after their steps.
	Assertions []Assertion
	// Base is the origin written as ${BASE} (BASE in code), overridable
	// when the test runs. If empty, the origin of the first http(s) URL.
	Base string
	// Source says where the steps came from, for the file's header.
	Source string
	// Secrets are the secret names the steps may read as ${NAME}.
	Secrets []string
}

// ErrEmpty is matched by the error of an export with no step to write.
var ErrEmpty = errors.New("nothing to export")

// UnstableError is a step whose element cannot be found again without the
// snapshot's ref.
type UnstableError struct {
	Step   int
	Tool   string
	Target string
}

func (e *UnstableError) Error() string {
	return fmt.Sprintf("step %d (%s %s): its element has no role and name and no selector could be resolved for it, so a replay could not find it again: leave the step out (steps: [...] without %d), or redo it with a selector target (e.g. \"#id\")", e.Step, e.Tool, e.Target, e.Step)
}

// exported are the tools a replay can run again; everything else an agent
// calls (snapshots, screenshots, reads) observes and is not recorded.
var exported = map[string]bool{
	"browser_navigate": true, "browser_navigate_back": true, "browser_click": true, "browser_type": true,
	"browser_press_key": true, "browser_hover": true, "browser_select_option": true, "browser_fill_form": true,
	"browser_drag": true, "browser_wait_for": true,
}

// Recorded says tool's calls are recorded as steps.
func Recorded(tool string) bool { return exported[tool] }

// plan is the steps an export writes, with their assertions.
type plan struct {
	o       Options
	steps   []Step
	asserts map[int][]Assertion
	base    string
	skipped []int // failed steps left out
	total   int
}

func newPlan(all []Step, o Options) (*plan, error) {
	if o.Format == "" {
		o.Format = Smoke
	}
	if o.Name == "" {
		o.Name = "session"
	}
	p := &plan{o: o, asserts: map[int][]Assertion{}, total: len(all)}
	if len(all) == 0 {
		return nil, fmt.Errorf("%w: the session has no recorded actions; drive the page first (browser_navigate, browser_click, browser_type…) — calls are recorded while the server runs with --caps export or --save-session", ErrEmpty)
	}
	last := all[len(all)-1].N
	from, to := o.From, o.To
	if from == 0 {
		from = all[0].N
	}
	if to == 0 {
		to = last
	}
	if from > last || to < all[0].N {
		return nil, fmt.Errorf("from %d to %d selects no step: the session has steps %d–%d", o.From, o.To, all[0].N, last)
	}
	if from > to {
		return nil, fmt.Errorf("from %d is after to %d: pick a range of the steps %d–%d", from, to, all[0].N, last)
	}
	known := map[int]bool{}
	for _, s := range all {
		known[s.N] = true
	}
	for _, k := range o.Keep {
		if !known[k] {
			return nil, fmt.Errorf("steps: there is no step %d (the session has steps %d–%d)", k, all[0].N, last)
		}
	}
	var failed []Step
	for _, s := range all {
		if s.N < from || s.N > to || len(o.Keep) > 0 && !slices.Contains(o.Keep, s.N) {
			continue
		}
		if s.Error != "" {
			failed = append(failed, s)
			p.skipped = append(p.skipped, s.N)
			continue
		}
		if err := checkStable(s); err != nil {
			return nil, err
		}
		p.steps = append(p.steps, s)
	}
	if len(p.steps) == 0 {
		if len(failed) > 0 {
			f := failed[0]
			return nil, fmt.Errorf("%w: every selected step failed (step %d %s: %s); a test of failed calls would replay nothing — redo the actions, then export", ErrEmpty, f.N, f.Tool, firstLine(f.Error))
		}
		return nil, fmt.Errorf("%w: no step selected (from %d, to %d, steps %v)", ErrEmpty, o.From, o.To, o.Keep)
	}
	for _, a := range o.Assertions {
		if !slices.ContainsFunc(p.steps, func(s Step) bool { return s.N == a.Step }) {
			return nil, fmt.Errorf("assertions: step %d is not among the exported steps (%s)", a.Step, p.numbers())
		}
		n := 0
		for _, set := range []string{a.Role, a.Text, a.URL, a.Title} {
			if set != "" {
				n++
			}
		}
		if n != 1 {
			return nil, fmt.Errorf("assertions: step %d: give exactly one of role (with name), text, url, title", a.Step)
		}
		if a.Name != "" && a.Role == "" {
			return nil, fmt.Errorf("assertions: step %d: name needs a role (e.g. {role: heading, name: Welcome})", a.Step)
		}
		p.asserts[a.Step] = append(p.asserts[a.Step], a)
	}
	p.base = o.Base
	if p.base == "" {
		for _, s := range p.steps {
			if u, err := url.Parse(s.After.URL); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
				p.base = u.Scheme + "://" + u.Host
				break
			}
		}
	}
	p.base = strings.TrimSuffix(p.base, "/")
	return p, nil
}

func (p *plan) numbers() string {
	var ns []string
	for _, s := range p.steps {
		ns = append(ns, fmt.Sprint(s.N))
	}
	return strings.Join(ns, ", ")
}

func checkStable(s Step) error {
	check := func(t *Target) error {
		if t != nil && !t.stable() {
			return &UnstableError{Step: s.N, Tool: s.Tool, Target: t.Given}
		}
		return nil
	}
	for _, t := range append([]*Target{s.Target, s.EndTarget}, s.Fields...) {
		if err := check(t); err != nil {
			return err
		}
	}
	if needsTarget(s.Tool) && s.Target == nil {
		return &UnstableError{Step: s.N, Tool: s.Tool, Target: "(no target)"}
	}
	return nil
}

func needsTarget(tool string) bool {
	switch tool {
	case "browser_click", "browser_type", "browser_hover", "browser_select_option", "browser_drag":
		return true
	}
	return false
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// Export writes steps in o.Format.
func Export(steps []Step, o Options) ([]byte, error) {
	p, err := newPlan(steps, o)
	if err != nil {
		return nil, err
	}
	if p.o.Format == Smoke {
		return p.smoke(), nil
	}
	lang := map[Format]codegen.Language{TypeScript: codegen.TypeScript, Python: codegen.Python, Java: codegen.Java, CSharp: codegen.CSharp}[p.o.Format]
	if lang == "" {
		return nil, fmt.Errorf("unknown format %q: use smoke, typescript, python, java or csharp", o.Format)
	}
	return p.code(lang), nil
}

// expectations are what a step's replay checks: the URL and title when
// they changed, up to three elements that appeared, and the agent's
// assertions.
type expectations struct {
	url, title string
	has        []Element
	texts      []string
}

func (p *plan) expect(s Step) expectations {
	var e expectations
	nav := s.Tool == "browser_navigate" || s.Tool == "browser_navigate_back"
	if s.After.URL != "" && (s.After.URLChanged || nav) {
		e.url = s.After.URL
	}
	if s.After.Title != "" && (s.After.TitleChanged || nav) {
		e.title = s.After.Title
	}
	e.has = Choose(s.After.Appeared)
	for _, a := range p.asserts[s.N] {
		switch {
		case a.URL != "":
			e.url = a.URL
		case a.Title != "":
			e.title = a.Title
		case a.Role != "":
			e.has = append(e.has, Element{Role: a.Role, Label: a.Name})
		case a.Text != "":
			e.texts = append(e.texts, a.Text)
		}
	}
	return e
}

// MaxChosen is how many of the elements that appeared a step expects.
const MaxChosen = 3

// Choose picks the elements a step's replay expects among those that
// appeared: feedback (alert, status) and headings before list items,
// before controls; at most MaxChosen, none naming a ${VAR}.
func Choose(appeared []Element) []Element {
	cands := slices.Clone(appeared)
	sort.SliceStable(cands, func(i, j int) bool { return rolePriority(cands[i].Role) > rolePriority(cands[j].Role) })
	var out []Element
	for _, c := range cands {
		if len(out) == MaxChosen {
			break
		}
		if strings.Contains(c.Label, "${") || !expectable(c) {
			continue
		}
		out = append(out, c)
	}
	return out
}

// baseURL splits u into the part after the base, when it starts with it.
func (p *plan) baseURL(u string) (rest string, ok bool) {
	if p.base == "" {
		return u, false
	}
	if u == p.base {
		return "", true
	}
	if strings.HasPrefix(u, p.base+"/") || strings.HasPrefix(u, p.base+"?") || strings.HasPrefix(u, p.base+"#") {
		return u[len(p.base):], true
	}
	return u, false
}

// stepName describes a step for reports and comments.
func stepName(s Step) string {
	verb := strings.TrimPrefix(s.Tool, "browser_")
	switch s.Tool {
	case "browser_navigate":
		return "navigate to " + str(s.Args["url"])
	case "browser_navigate_back":
		return "go back"
	case "browser_type":
		return fmt.Sprintf("type into %s", s.Target)
	case "browser_press_key":
		return "press " + str(s.Args["key"])
	case "browser_fill_form":
		return fmt.Sprintf("fill %d fields", len(s.Fields))
	case "browser_wait_for":
		return "wait for " + strings.TrimSpace(str(s.Args["text"])+" "+str(s.Args["textGone"]))
	case "browser_drag":
		return fmt.Sprintf("drag %s to %s", s.Target, s.EndTarget)
	}
	if s.Target != nil {
		return verb + " " + s.Target.String()
	}
	return verb
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
