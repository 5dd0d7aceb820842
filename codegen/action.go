package codegen

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/clip"
)

// Action is one recorded action, as upstream's tools record them (the
// recorder's action names).
type Action struct {
	// Name is click, hover, check, uncheck, fill, press, select, navigate,
	// assertVisible, assertValue, assertChecked or assertSnapshot.
	Name string
	// Selector is the Playwright selector of the element acted on.
	Selector string
	// Button is left, right or middle (click); empty means left.
	Button string
	// Modifiers are the keys held (click, press): Alt, Control,
	// ControlOrMeta, Meta, Shift.
	Modifiers []string
	// ClickCount is 2 for a double click; zero means 1.
	ClickCount int
	// Text is what fill types.
	Text string
	// Key is what press presses.
	Key string
	// URL is where navigate goes.
	URL string
	// Options are what select selects.
	Options []string
	// Value is what assertValue expects.
	Value string
	// Checked is what assertChecked expects.
	Checked bool
	// AriaSnapshot is what assertSnapshot expects the element to match.
	AriaSnapshot string
}

// Code is the code of one tool call: lines upstream adds as they are (always
// TypeScript, as upstream does) and actions printed in the language.
type Code struct {
	items []any // string or Action
}

// Add adds a line printed as it is.
func (c *Code) Add(line string) { c.items = append(c.items, line) }

// Action adds an action printed in the language.
func (c *Code) Action(a Action) { c.items = append(c.items, a) }

// Empty reports whether nothing was added.
func (c *Code) Empty() bool { return c == nil || len(c.items) == 0 }

// Render prints the code in lang; secret names (the keys of --secrets)
// turn 'SECRET_NAME' literals into reads of the environment variable.
func (c *Code) Render(lang Language, secretNames []string) []string {
	if c.Empty() || lang == None {
		return nil
	}
	var lines []string
	for _, it := range c.items {
		switch v := it.(type) {
		case string:
			lines = append(lines, v)
		case Action:
			if s := v.render(lang); s != "" {
				lines = append(lines, strings.Split(s, "\n")...)
			}
		}
	}
	if len(secretNames) == 0 {
		return lines
	}
	for i, l := range lines {
		for _, n := range secretNames {
			for _, q := range []string{"'", `"`} {
				l = strings.ReplaceAll(l, q+"SECRET_"+n+q, SecretCode(lang, n))
			}
		}
		lines[i] = l
	}
	return lines
}

// SecretCode is how code in lang reads the secret name from the environment.
func SecretCode(lang Language, name string) string {
	switch lang {
	case TypeScript:
		return "process.env['" + name + "']"
	case Python:
		return `os.environ["` + name + `"]`
	case Java:
		return `System.getenv("` + name + `")`
	case CSharp:
		return `Environment.GetEnvironmentVariable("` + name + `")`
	}
	return `"SECRET_` + name + `"`
}

// Quote quotes s as upstream's hand-written TypeScript lines do.
func Quote(s string) string { return escapeWithQuotes(literal(s), '\'') }

// maxLiteral is the longest string the code section quotes whole. A longer
// one (a megabyte typed into a field) shows its first clip.Max characters
// and its length, as the agent sent it and needs no copy back.
const maxLiteral = 1000

func literal(s string) string {
	if len(s) <= maxLiteral || utf8.RuneCountInString(s) <= maxLiteral {
		return s
	}
	return fmt.Sprintf("%s… (%d chars)", clip.Prefix(s, clip.Max), utf8.RuneCountInString(s))
}

// keyboardModifiers maps modifiers the way the recorder's bit mask does:
// Control and Meta both print as ControlOrMeta.
func keyboardModifiers(mods []string) []string {
	has := map[string]bool{}
	for _, m := range mods {
		has[m] = true
	}
	var out []string
	if has["Alt"] {
		out = append(out, "Alt")
	}
	if has["Control"] || has["ControlOrMeta"] {
		out = append(out, "ControlOrMeta")
	}
	if has["Meta"] {
		out = append(out, "ControlOrMeta")
	}
	if has["Shift"] {
		out = append(out, "Shift")
	}
	return out
}

func (a Action) render(lang Language) string {
	loc := "page." + AsLocator(lang, a.Selector)
	g := gen{lang: lang}
	q := g.quote
	switch lang {
	case Python:
		switch a.Name {
		case "click":
			m := "click"
			if a.ClickCount == 2 {
				m = "dblclick"
			}
			return loc + "." + m + "(" + a.pyClickOptions() + ")"
		case "hover":
			return loc + ".hover()"
		case "check", "uncheck":
			return loc + "." + a.Name + "()"
		case "fill":
			return loc + ".fill(" + q(a.Text) + ")"
		case "press":
			return loc + ".press(" + q(a.shortcut()) + ")"
		case "navigate":
			return "page.goto(" + q(a.URL) + ")"
		case "select":
			return loc + ".select_option(" + a.list(g, "[", "]") + ")"
		case "assertVisible":
			return "expect(" + loc + ").to_be_visible()"
		case "assertChecked":
			if a.Checked {
				return "expect(" + loc + ").to_be_checked()"
			}
			return "expect(" + loc + ").not_to_be_checked()"
		case "assertValue":
			if a.Value == "" {
				return "expect(" + loc + ").to_be_empty()"
			}
			return "expect(" + loc + ").to_have_value(" + q(a.Value) + ")"
		case "assertSnapshot":
			return "expect(" + loc + ").to_match_aria_snapshot(" + q(a.AriaSnapshot) + ")"
		}
	case Java:
		switch a.Name {
		case "click":
			m := "click"
			if a.ClickCount == 2 {
				m = "dblclick"
			}
			return loc + "." + m + "(" + a.javaClickOptions() + ");"
		case "hover":
			return loc + ".hover();"
		case "check", "uncheck":
			return loc + "." + a.Name + "();"
		case "fill":
			return loc + ".fill(" + q(a.Text) + ");"
		case "press":
			return loc + ".press(" + q(a.shortcut()) + ");"
		case "navigate":
			return "page.navigate(" + q(a.URL) + ");"
		case "select":
			if len(a.Options) == 1 {
				return loc + ".selectOption(" + q(a.Options[0]) + ");"
			}
			if len(a.Options) == 0 {
				return loc + ".selectOption(new String[0]);"
			}
			var qs []string
			for _, o := range a.Options {
				qs = append(qs, q(o))
			}
			return loc + ".selectOption(new String[] {" + strings.Join(qs, ", ") + "});"
		case "assertVisible":
			return "assertThat(" + loc + ").isVisible();"
		case "assertChecked":
			if a.Checked {
				return "assertThat(" + loc + ").isChecked();"
			}
			return "assertThat(" + loc + ").not().isChecked();"
		case "assertValue":
			if a.Value == "" {
				return "assertThat(" + loc + ").isEmpty();"
			}
			return "assertThat(" + loc + ").hasValue(" + q(a.Value) + ");"
		case "assertSnapshot":
			return "assertThat(" + loc + ").matchesAriaSnapshot(" + q(a.AriaSnapshot) + ");"
		}
	case CSharp:
		switch a.Name {
		case "click":
			m := "Click"
			if a.ClickCount == 2 {
				m = "DblClick"
			}
			return "await " + loc + "." + m + "Async(" + a.csClickOptions() + ");"
		case "hover":
			return "await " + loc + ".HoverAsync();"
		case "check":
			return "await " + loc + ".CheckAsync();"
		case "uncheck":
			return "await " + loc + ".UncheckAsync();"
		case "fill":
			return "await " + loc + ".FillAsync(" + q(a.Text) + ");"
		case "press":
			return "await " + loc + ".PressAsync(" + q(a.shortcut()) + ");"
		case "navigate":
			return "await page.GotoAsync(" + q(a.URL) + ");"
		case "select":
			return "await " + loc + ".SelectOptionAsync(new[] { " + a.list(g, "", "") + " });"
		case "assertVisible":
			return "await Expect(" + loc + ").ToBeVisibleAsync();"
		case "assertChecked":
			if a.Checked {
				return "await Expect(" + loc + ").ToBeCheckedAsync();"
			}
			return "await Expect(" + loc + ").Not.ToBeCheckedAsync();"
		case "assertValue":
			if a.Value == "" {
				return "await Expect(" + loc + ").ToBeEmptyAsync();"
			}
			return "await Expect(" + loc + ").ToHaveValueAsync(" + q(a.Value) + ");"
		case "assertSnapshot":
			return "await Expect(" + loc + ").ToMatchAriaSnapshotAsync(" + q(a.AriaSnapshot) + ");"
		}
	default:
		switch a.Name {
		case "click":
			m := "click"
			if a.ClickCount == 2 {
				m = "dblclick"
			}
			return "await " + loc + "." + m + "(" + a.tsClickOptions() + ");"
		case "hover":
			return "await " + loc + ".hover();"
		case "check", "uncheck":
			return "await " + loc + "." + a.Name + "();"
		case "fill":
			return "await " + loc + ".fill(" + q(a.Text) + ");"
		case "press":
			return "await " + loc + ".press(" + q(a.shortcut()) + ");"
		case "navigate":
			return "await page.goto(" + q(a.URL) + ");"
		case "select":
			if len(a.Options) == 1 {
				return "await " + loc + ".selectOption(" + q(a.Options[0]) + ");"
			}
			return "await " + loc + ".selectOption(" + a.list(g, "[", "]") + ");"
		case "assertVisible":
			return "await expect(" + loc + ").toBeVisible();"
		case "assertChecked":
			if a.Checked {
				return "await expect(" + loc + ").toBeChecked();"
			}
			return "await expect(" + loc + ").not.toBeChecked();"
		case "assertValue":
			if a.Value == "" {
				return "await expect(" + loc + ").toBeEmpty();"
			}
			return "await expect(" + loc + ").toHaveValue(" + q(a.Value) + ");"
		case "assertSnapshot":
			return "await expect(" + loc + ").toMatchAriaSnapshot(" + quoteMultiline(literal(a.AriaSnapshot), "  ") + ");"
		}
	}
	return ""
}

func (a Action) list(g gen, open, close string) string {
	if g.lang == Python && len(a.Options) == 1 {
		return g.quote(a.Options[0])
	}
	var qs []string
	for _, o := range a.Options {
		qs = append(qs, g.quote(o))
	}
	return open + strings.Join(qs, ", ") + close
}

func (a Action) shortcut() string {
	return strings.Join(append(keyboardModifiers(a.Modifiers), a.Key), "+")
}

// clickOptions are the options the recorder prints for a click, by name.
func (a Action) clickOptions() map[string]any {
	o := map[string]any{}
	if a.Button != "" && a.Button != "left" {
		o["button"] = a.Button
	}
	if m := keyboardModifiers(a.Modifiers); len(m) > 0 {
		o["modifiers"] = m
	}
	if a.ClickCount > 2 {
		o["clickCount"] = a.ClickCount
	}
	return o
}

func sortedKeys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func (a Action) tsClickOptions() string {
	o := a.clickOptions()
	if len(o) == 0 {
		return ""
	}
	var lines []string
	for _, k := range sortedKeys(o) {
		switch v := o[k].(type) {
		case string:
			lines = append(lines, "  "+k+": "+Quote(v))
		case []string:
			var qs []string
			for _, s := range v {
				qs = append(qs, Quote(s))
			}
			lines = append(lines, "  "+k+": ["+strings.Join(qs, ", ")+"]")
		case int:
			lines = append(lines, "  "+k+": "+strconv.Itoa(v))
		}
	}
	return "{\n" + strings.Join(lines, ",\n") + "\n}"
}

func (a Action) pyClickOptions() string {
	o := a.clickOptions()
	var parts []string
	for _, k := range sortedKeys(o) {
		var v string
		switch x := o[k].(type) {
		case string:
			v = escapeWithQuotes(x, '"')
		case []string:
			var qs []string
			for _, s := range x {
				qs = append(qs, escapeWithQuotes(s, '"'))
			}
			v = "[" + strings.Join(qs, ", ") + "]"
		case int:
			v = strconv.Itoa(x)
		}
		parts = append(parts, toSnakeCase(k)+"="+v)
	}
	return strings.Join(parts, ", ")
}

func (a Action) javaClickOptions() string {
	o := a.clickOptions()
	if len(o) == 0 {
		return ""
	}
	lines := []string{"new Locator.ClickOptions()"}
	if b, ok := o["button"].(string); ok {
		lines = append(lines, "  .setButton(MouseButton."+strings.ToUpper(b)+")")
	}
	if m, ok := o["modifiers"].([]string); ok {
		var ms []string
		for _, x := range m {
			ms = append(ms, "KeyboardModifier."+strings.ToUpper(x))
		}
		lines = append(lines, "  .setModifiers(Arrays.asList("+strings.Join(ms, ", ")+"))")
	}
	if n, ok := o["clickCount"].(int); ok {
		lines = append(lines, "  .setClickCount("+strconv.Itoa(n)+")")
	}
	return strings.Join(lines, "\n")
}

func (a Action) csClickOptions() string {
	o := a.clickOptions()
	if len(o) == 0 {
		return ""
	}
	var toks []string
	for _, k := range sortedKeys(o) {
		var v string
		switch x := o[k].(type) {
		case string:
			v = "MouseButton." + toTitleCase(x)
		case []string:
			var ms []string
			for _, s := range x {
				ms = append(ms, "KeyboardModifier."+toTitleCase(s))
			}
			v = "new[] { " + strings.Join(ms, ", ") + " }"
		case int:
			v = strconv.Itoa(x)
		}
		toks = append(toks, "    "+toTitleCase(k)+" = "+v+",")
	}
	return "new()\n{\n" + strings.Join(toks, "\n") + "\n}"
}

// Literal is s as a string literal of lang, whole (a test file needs every
// character; the code section's Quote shortens long ones).
func Literal(lang Language, s string) string {
	if lang == TypeScript {
		return escapeWithQuotes(s, '\'')
	}
	return escapeWithQuotes(s, '"')
}
