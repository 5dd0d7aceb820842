package recording

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/cloakmcp/cloakbrowser-mcp/codegen"
)

// varRef is a ${NAME} in a recorded string.
var varRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// code writes the plan as a Playwright test in lang: @playwright/test,
// pytest-playwright, JUnit 5 or NUnit.
func (p *plan) code(lang codegen.Language) []byte {
	var body []string
	for _, s := range p.steps {
		body = append(body, p.comment(lang, fmt.Sprintf("%d. %s", s.N, strings.ReplaceAll(stepName(s), p.base+"/", "/"))))
		for _, t := range append([]*Target{s.Target, s.EndTarget}, s.Fields...) {
			if t != nil && t.Count > 1 && t.Role != "" {
				body = append(body, p.comment(lang, fmt.Sprintf("%d elements are %s %q: the %s is the one the agent used", t.Count, t.Role, t.Name, ordinal(t.Nth+1))))
			}
		}
		body = append(body, p.actionLines(lang, s)...)
		body = append(body, p.expectLines(lang, p.expect(s))...)
	}
	var b bytes.Buffer
	c := "//"
	if lang == codegen.Python {
		c = "#"
	}
	p.header(&b, c)
	base := codegen.Literal(lang, p.base)
	name := p.o.Name
	switch lang {
	case codegen.TypeScript:
		b.WriteString("import { test, expect } from '@playwright/test';\n\n")
		fmt.Fprintf(&b, "const BASE = process.env['BASE'] ?? %s;\n\n", base)
		fmt.Fprintf(&b, "test(%s, async ({ page }) => {\n", codegen.Literal(lang, name))
		indent(&b, body, "  ")
		b.WriteString("});\n")
	case codegen.Python:
		b.WriteString("import os\nimport re\n\nfrom playwright.sync_api import Page, expect\n\n")
		fmt.Fprintf(&b, "BASE = os.environ.get(\"BASE\", %s)\n\n\n", base)
		fmt.Fprintf(&b, "def test_%s(page: Page) -> None:\n", snake(name))
		indent(&b, body, "    ")
	case codegen.Java:
		b.WriteString("import com.microsoft.playwright.*;\nimport com.microsoft.playwright.options.*;\nimport org.junit.jupiter.api.*;\n\n")
		b.WriteString("import static com.microsoft.playwright.assertions.PlaywrightAssertions.assertThat;\n\n")
		fmt.Fprintf(&b, "public class %s {\n", ClassName(name))
		fmt.Fprintf(&b, "  static final String BASE = System.getenv().getOrDefault(\"BASE\", %s);\n", base)
		b.WriteString("  static Playwright playwright;\n  static Browser browser;\n  BrowserContext context;\n  Page page;\n\n")
		b.WriteString("  @BeforeAll\n  static void launchBrowser() {\n    playwright = Playwright.create();\n    browser = playwright.chromium().launch();\n  }\n\n")
		b.WriteString("  @AfterAll\n  static void closeBrowser() {\n    playwright.close();\n  }\n\n")
		b.WriteString("  @BeforeEach\n  void createContext() {\n    context = browser.newContext();\n    page = context.newPage();\n  }\n\n")
		b.WriteString("  @AfterEach\n  void closeContext() {\n    context.close();\n  }\n\n")
		fmt.Fprintf(&b, "  @Test\n  void %s() {\n", lowerFirst(camel(name)))
		indent(&b, body, "    ")
		b.WriteString("  }\n}\n")
	case codegen.CSharp:
		b.WriteString("using System;\nusing System.Text.RegularExpressions;\nusing System.Threading.Tasks;\nusing Microsoft.Playwright;\nusing Microsoft.Playwright.NUnit;\nusing NUnit.Framework;\n\n")
		b.WriteString("[Parallelizable(ParallelScope.Self)]\n[TestFixture]\n")
		fmt.Fprintf(&b, "public class %s : PageTest\n{\n", ClassName(name))
		fmt.Fprintf(&b, "    static readonly string BASE = Environment.GetEnvironmentVariable(\"BASE\") ?? %s;\n\n", base)
		fmt.Fprintf(&b, "    [Test]\n    public async Task %s()\n    {\n", camel(name))
		b.WriteString("        var page = Page;\n")
		indent(&b, body, "        ")
		b.WriteString("    }\n}\n")
	}
	return b.Bytes()
}

func indent(b *bytes.Buffer, lines []string, in string) {
	for _, l := range lines {
		for _, ll := range strings.Split(l, "\n") {
			b.WriteString(in + ll + "\n")
		}
	}
}

func (p *plan) comment(lang codegen.Language, s string) string {
	if lang == codegen.Python {
		return "# " + s
	}
	return "// " + s
}

// urlExpr is the code of a URL: BASE + the rest when it is under the base.
func (p *plan) urlExpr(lang codegen.Language, u string) string {
	if rest, ok := p.baseURL(u); ok {
		if rest == "" {
			return "BASE"
		}
		return "BASE + " + codegen.Literal(lang, rest)
	}
	return codegen.Literal(lang, u)
}

// pick returns the line of lang among TypeScript's, Python's, Java's and C#'s.
func pick(lang codegen.Language, ts, py, java, cs string) string {
	switch lang {
	case codegen.Python:
		return py
	case codegen.Java:
		return java
	case codegen.CSharp:
		return cs
	}
	return ts
}

// locatorOf is the code of a target's locator (without "page.").
func locatorOf(lang codegen.Language, t *Target) string {
	return codegen.AsLocator(lang, targetSelector(t))
}

// targetSelector is the Playwright selector of a target: the one resolved
// when the step ran, else one built from its role, name and nth.
func targetSelector(t *Target) string {
	if t.selectorOK() {
		return t.Selector
	}
	sel := "internal:role=" + t.Role
	if t.Name != "" {
		sel += "[name=" + Flow(t.Name) + "i]"
	}
	if t.Count > 1 {
		sel += fmt.Sprintf(" >> nth=%d", t.Nth)
	}
	return sel
}

// elementSelector is the selector of an expected element.
func elementSelector(e Element) string {
	if e.Text {
		return "internal:role=" + e.Role + " >> internal:has-text=" + Flow(e.Label) + "i >> nth=0"
	}
	sel := "internal:role=" + e.Role
	if e.Label != "" {
		sel += "[name=" + Flow(e.Label) + "s]"
	}
	if e.Count > 1 || e.Label == "" {
		sel += " >> nth=0"
	}
	return sel
}

// secretText turns a typed ${NAME} into the codegen's SECRET_NAME literal,
// which Render prints as a read of the environment.
func secretText(s string) (string, bool) {
	if m := varRef.FindStringSubmatch(s); m != nil && m[0] == s {
		return "SECRET_" + m[1], true
	}
	return s, false
}

func (p *plan) render(lang codegen.Language, actions ...codegen.Action) []string {
	var c codegen.Code
	for _, a := range actions {
		c.Action(a)
	}
	return c.Render(lang, p.secretsUsed())
}

func (p *plan) actionLines(lang codegen.Language, s Step) []string {
	q := func(v string) string { return codegen.Literal(lang, v) }
	switch s.Tool {
	case "browser_navigate":
		u := p.urlExpr(lang, str(s.Args["url"]))
		return []string{pick(lang, "await page.goto("+u+");", "page.goto("+u+")", "page.navigate("+u+");", "await page.GotoAsync("+u+");")}
	case "browser_navigate_back":
		return []string{pick(lang, "await page.goBack();", "page.go_back()", "page.goBack();", "await page.GoBackAsync();")}
	case "browser_press_key":
		k := q(str(s.Args["key"]))
		return []string{pick(lang, "await page.keyboard.press("+k+");", "page.keyboard.press("+k+")", "page.keyboard().press("+k+");", "await page.Keyboard.PressAsync("+k+");")}
	case "browser_click":
		count := 1
		if b, _ := s.Args["doubleClick"].(bool); b {
			count = 2
		}
		return p.render(lang, codegen.Action{Name: "click", Selector: targetSelector(s.Target), Button: str(s.Args["button"]), Modifiers: strs(s.Args["modifiers"]), ClickCount: count})
	case "browser_hover":
		return p.render(lang, codegen.Action{Name: "hover", Selector: targetSelector(s.Target)})
	case "browser_type":
		text, _ := secretText(str(s.Args["text"]))
		acts := []codegen.Action{{Name: "fill", Selector: targetSelector(s.Target), Text: text}}
		if b, _ := s.Args["submit"].(bool); b {
			acts = append(acts, codegen.Action{Name: "press", Selector: targetSelector(s.Target), Key: "Enter"})
		}
		return p.render(lang, acts...)
	case "browser_select_option":
		return p.render(lang, codegen.Action{Name: "select", Selector: targetSelector(s.Target), Options: strs(s.Args["values"])})
	case "browser_drag":
		a, b := locatorOf(lang, s.Target), locatorOf(lang, s.EndTarget)
		return []string{pick(lang, "await page."+a+".dragTo(page."+b+");", "page."+a+".drag_to(page."+b+")", "page."+a+".dragTo(page."+b+");", "await page."+a+".DragToAsync(page."+b+");")}
	case "browser_fill_form":
		fields, _ := s.Args["fields"].([]any)
		var acts []codegen.Action
		for i, f := range fields {
			m, _ := f.(map[string]any)
			if i >= len(s.Fields) || s.Fields[i] == nil {
				continue
			}
			sel, value := targetSelector(s.Fields[i]), str(m["value"])
			switch str(m["type"]) {
			case "checkbox":
				acts = append(acts, codegen.Action{Name: map[bool]string{true: "check", false: "uncheck"}[value == "true"], Selector: sel})
			case "radio":
				acts = append(acts, codegen.Action{Name: "check", Selector: sel})
			case "combobox":
				acts = append(acts, codegen.Action{Name: "select", Selector: sel, Options: []string{value}})
			default:
				text, _ := secretText(value)
				acts = append(acts, codegen.Action{Name: "fill", Selector: sel, Text: text})
			}
		}
		return p.render(lang, acts...)
	case "browser_wait_for":
		var out []string
		if t := str(s.Args["text"]); t != "" {
			out = append(out, p.render(lang, codegen.Action{Name: "assertVisible", Selector: "internal:text=" + Flow(t) + "i >> nth=0"})...)
		}
		if t := str(s.Args["textGone"]); t != "" {
			loc := "page." + codegen.AsLocator(lang, "internal:text="+Flow(t)+"i")
			out = append(out, pick(lang, "await expect("+loc+").toHaveCount(0);", "expect("+loc+").to_have_count(0)", "assertThat("+loc+").hasCount(0);", "await Expect("+loc+").ToHaveCountAsync(0);"))
		}
		if len(out) == 0 {
			out = append(out, p.comment(lang, "a fixed wait: left out, the expectations wait"))
		}
		return out
	}
	return []string{p.comment(lang, "not exported: "+s.Tool)}
}

func (p *plan) expectLines(lang codegen.Language, e expectations) []string {
	var out []string
	if e.url != "" {
		u := p.urlExpr(lang, e.url)
		out = append(out, pick(lang, "await expect(page).toHaveURL("+u+");", "expect(page).to_have_url("+u+")", "assertThat(page).hasURL("+u+");", "await Expect(page).ToHaveURLAsync("+u+");"))
	}
	if e.title != "" {
		t := codegen.Literal(lang, e.title)
		out = append(out, pick(lang, "await expect(page).toHaveTitle("+t+");", "expect(page).to_have_title("+t+")", "assertThat(page).hasTitle("+t+");", "await Expect(page).ToHaveTitleAsync("+t+");"))
	}
	var acts []codegen.Action
	for _, h := range e.has {
		acts = append(acts, codegen.Action{Name: "assertVisible", Selector: elementSelector(h)})
	}
	for _, t := range e.texts {
		acts = append(acts, codegen.Action{Name: "assertVisible", Selector: "internal:text=" + Flow(t) + "i >> nth=0"})
	}
	return append(out, p.render(lang, acts...)...)
}

func strs(v any) []string {
	var out []string
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
	case []string:
		out = x
	}
	return out
}

// words splits a name into its letters-and-digits words.
func words(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) || r > unicode.MaxASCII })
}

func camel(s string) string {
	var b strings.Builder
	for _, w := range words(s) {
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	out := b.String()
	if out == "" || unicode.IsDigit(rune(out[0])) {
		out = "Session" + out
	}
	return out
}

func snake(s string) string {
	out := strings.ToLower(strings.Join(words(s), "_"))
	if out == "" || unicode.IsDigit(rune(out[0])) {
		out = "session_" + out
	}
	return strings.TrimSuffix(out, "_")
}

func lowerFirst(s string) string { return strings.ToLower(s[:1]) + s[1:] }

// ClassName is the Java or C# class of a test named name (its file's name
// in Java).
func ClassName(name string) string { return camel(name) + "Test" }

// DefaultFileName is the file an export of a test named name writes when
// no file name is given.
func DefaultFileName(name string, f Format) string {
	switch f {
	case Java, CSharp:
		return ClassName(name) + map[Format]string{Java: ".java", CSharp: ".cs"}[f]
	case Python:
		return "test_" + snake(name) + ".py"
	case TypeScript:
		return strings.ReplaceAll(snake(name), "_", "-") + ".spec.ts"
	}
	return strings.ReplaceAll(snake(name), "_", "-") + ".yaml"
}
