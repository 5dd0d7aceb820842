package tools

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/cloakmcp/cloakbrowser-mcp/codegen"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/clip"
)

// testingTools are upstream's --caps=testing tools: a locator for test code,
// and assertions that fail with isError.
func testingTools() []*Tool {
	quiet := tabOpts{noPage: true}
	return []*Tool{
		{Def: upstreamDef("browser_generate_locator"),
			Cap: "testing", Aliases: refAlias, Handle: tabTool("browser_generate_locator", quiet, generateLocator)},
		{Def: upstreamDef("browser_verify_element_visible"),
			Cap: "testing", Handle: tabTool("browser_verify_element_visible", quiet, verifyElementVisible)},
		{Def: upstreamDef("browser_verify_text_visible"),
			Cap: "testing", Handle: tabTool("browser_verify_text_visible", quiet, verifyTextVisible)},
		{Def: upstreamDef("browser_verify_list_visible"),
			Cap: "testing", Aliases: refAlias, Handle: tabTool("browser_verify_list_visible", quiet, verifyListVisible)},
		{Def: upstreamDef("browser_verify_value"),
			Cap: "testing", Aliases: refAlias, Handle: tabTool("browser_verify_value", quiet, verifyValue)},
	}
}

func generateLocator(c *tabCall) error {
	target := c.args.String("target", "")
	el, err := c.locate(target)
	if err != nil {
		return err
	}
	sel, err := el.Selector(c.ctx)
	if err != nil {
		return fmt.Errorf("could not read the locator of %s: %w", c.describe(target), err)
	}
	c.resp.ResultText(asLocator(sel))
	return nil
}

// jsQuote renders s as a single-quoted JavaScript string.
func jsQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`, "\r", `\r`)
	return "'" + r.Replace(s) + "'"
}

// quotedArg parses Playwright's `"text"i` / `"text"s` selector argument:
// the JSON string and whether the match is exact.
var quotedArg = regexp.MustCompile(`^("(?:[^"\\]|\\.)*")([is]?)$`)

func parseQuoted(s string) (text string, exact, ok bool) {
	m := quotedArg.FindStringSubmatch(s)
	if m == nil {
		return "", false, false
	}
	if err := json.Unmarshal([]byte(m[1]), &text); err != nil {
		return "", false, false
	}
	return text, m[2] == "s", true
}

var attrPart = regexp.MustCompile(`\[([a-z-]+)=("(?:[^"\\]|\\.)*"[is]?|[^\]]*)\]`)

// asLocator turns a Playwright selector (as Locator.Normalize resolves it)
// into the locator code upstream prints, e.g.
// internal:role=button[name="Submit"i] → getByRole('button', { name: 'Submit' }).
// Parts it does not know print as locator('…').
func asLocator(selector string) string {
	parts := strings.Split(selector, " >> ")
	var out []string
	for _, p := range parts {
		out = append(out, locatorPart(p))
	}
	return strings.Join(out, ".")
}

func locatorPart(p string) string {
	exactOpt := func(exact bool) string {
		if exact {
			return ", { exact: true }"
		}
		return ""
	}
	switch {
	case strings.HasPrefix(p, "internal:role="):
		rest := strings.TrimPrefix(p, "internal:role=")
		role := rest
		if i := strings.IndexByte(rest, '['); i >= 0 {
			role = rest[:i]
		}
		var opts []string
		for _, m := range attrPart.FindAllStringSubmatch(rest[len(role):], -1) {
			key, val := m[1], m[2]
			if text, exact, ok := parseQuoted(val); ok {
				opts = append(opts, fmt.Sprintf("%s: %s", key, jsQuote(text)))
				if exact {
					opts = append(opts, "exact: true")
				}
				continue
			}
			if key == "include-hidden" {
				key = "includeHidden"
			}
			opts = append(opts, fmt.Sprintf("%s: %s", key, val))
		}
		if len(opts) == 0 {
			return fmt.Sprintf("getByRole(%s)", jsQuote(role))
		}
		return fmt.Sprintf("getByRole(%s, { %s })", jsQuote(role), strings.Join(opts, ", "))
	case strings.HasPrefix(p, "internal:testid="):
		if m := attrPart.FindStringSubmatch(strings.TrimPrefix(p, "internal:testid=")); m != nil {
			if text, _, ok := parseQuoted(m[2]); ok {
				return fmt.Sprintf("getByTestId(%s)", jsQuote(text))
			}
		}
	case strings.HasPrefix(p, "internal:label="):
		if text, exact, ok := parseQuoted(strings.TrimPrefix(p, "internal:label=")); ok {
			return fmt.Sprintf("getByLabel(%s%s)", jsQuote(text), exactOpt(exact))
		}
	case strings.HasPrefix(p, "internal:text="):
		if text, exact, ok := parseQuoted(strings.TrimPrefix(p, "internal:text=")); ok {
			return fmt.Sprintf("getByText(%s%s)", jsQuote(text), exactOpt(exact))
		}
	case strings.HasPrefix(p, "internal:has-text="):
		if text, _, ok := parseQuoted(strings.TrimPrefix(p, "internal:has-text=")); ok {
			return fmt.Sprintf("filter({ hasText: %s })", jsQuote(text))
		}
	case strings.HasPrefix(p, "internal:attr="):
		if m := attrPart.FindStringSubmatch(strings.TrimPrefix(p, "internal:attr=")); m != nil {
			if text, exact, ok := parseQuoted(m[2]); ok {
				fn := map[string]string{"placeholder": "getByPlaceholder", "alt": "getByAltText", "title": "getByTitle"}[m[1]]
				if fn != "" {
					return fmt.Sprintf("%s(%s%s)", fn, jsQuote(text), exactOpt(exact))
				}
			}
		}
	case p == "internal:control=enter-frame":
		return "contentFrame()"
	case strings.HasPrefix(p, "nth="):
		if n, err := strconv.Atoi(strings.TrimPrefix(p, "nth=")); err == nil {
			switch n {
			case 0:
				return "first()"
			case -1:
				return "last()"
			}
			return fmt.Sprintf("nth(%d)", n)
		}
	}
	return fmt.Sprintf("locator(%s)", jsQuote(strings.TrimPrefix(p, "css=")))
}

func verifyElementVisible(c *tabCall) error {
	role, name := c.args.String("role", ""), c.args.String("accessibleName", "")
	n, err := c.tab.CountVisibleByRole(c.ctx, role, name)
	if err != nil {
		return fmt.Errorf("find %s %s: %w", clip.Short(role), clip.Quote(name), err)
	}
	if n == 0 {
		return fmt.Errorf("element with role %s and accessible name %s is not visible", clip.Quote(role), clip.Quote(name))
	}
	if sel, err := c.tab.ByRoleSelector(c.ctx, role, name); err == nil {
		c.resp.Code().Action(codegen.Action{Name: "assertVisible", Selector: sel})
	}
	c.resp.Result("Element %s %s is visible", clip.Short(role), clip.Quote(name))
	return nil
}

func verifyTextVisible(c *tabCall) error {
	text := c.args.String("text", "")
	if strings.TrimSpace(text) == "" {
		return fmt.Errorf("text is empty")
	}
	n, err := c.tab.CountVisibleText(c.ctx, text)
	if err != nil {
		return fmt.Errorf("find text %s: %w", clip.Quote(text), err)
	}
	if n == 0 {
		return fmt.Errorf("text %s is not visible", clip.Quote(text))
	}
	if sel, err := c.tab.VisibleTextSelector(c.ctx, text); err == nil {
		c.resp.Code().Action(codegen.Action{Name: "assertVisible", Selector: sel})
	}
	c.resp.Result("Text %s is visible", clip.Quote(text))
	return nil
}

func verifyListVisible(c *tabCall) error {
	target := c.args.String("target", "")
	list, err := c.locate(target)
	if err != nil {
		return err
	}
	if ok, err := list.IsVisible(c.ctx); err != nil || !ok {
		return fmt.Errorf("list %s is not visible", c.describe(target))
	}
	var missing, texts []string
	for _, item := range c.args.Strings("items") {
		n, err := list.CountVisibleText(c.ctx, item)
		if err != nil {
			return fmt.Errorf("find item %s: %w", clip.Quote(item), err)
		}
		if n == 0 {
			missing = append(missing, strconv.Quote(item))
			continue
		}
		text := item
		if c.env.Output.lang() != codegen.None {
			if t, err := list.ItemText(c.ctx, item); err == nil {
				text = t
			}
		}
		texts = append(texts, text)
	}
	if len(missing) > 0 {
		return fmt.Errorf("list %s lacks visible item(s) %s", c.describe(target), strings.Join(missing, ", "))
	}
	// As upstream: an ARIA snapshot of the items' texts, matched on body.
	c.resp.Code().Action(codegen.Action{Name: "assertSnapshot", Selector: "body", AriaSnapshot: codegen.ListSnapshot(texts)})
	c.resp.Result("List %s shows all %d item(s)", c.describe(target), len(c.args.Strings("items")))
	return nil
}

func verifyValue(c *tabCall) error {
	target := c.args.String("target", "")
	el, err := c.locate(target)
	if err != nil {
		return err
	}
	typ, want := c.args.String("type", ""), c.args.String("value", "")
	var got string
	switch typ {
	case "checkbox", "radio":
		if want != "true" && want != "false" {
			return fmt.Errorf("for a %s, value must be \"true\" or \"false\", got %s", typ, clip.Quote(want))
		}
		checked, err := el.IsChecked(c.ctx)
		if err != nil {
			return fmt.Errorf("read %s: %w", c.describe(target), err)
		}
		got = strconv.FormatBool(checked)
	default:
		got, err = el.InputValue(c.ctx)
		if err != nil {
			return fmt.Errorf("read %s: %w", c.describe(target), err)
		}
		if typ == "combobox" && got != want {
			// A select matches by its selected option's label too.
			if label, ok, err := el.SelectedLabel(c.ctx); err == nil && ok && label == want {
				got = label
			}
		}
	}
	if got != want {
		return fmt.Errorf("%s has value %s, expected %s", c.describe(target), clip.Quote(got), clip.Quote(want))
	}
	sel := c.codeSelector(el, target)
	switch typ {
	case "checkbox", "radio":
		c.resp.Code().Action(codegen.Action{Name: "assertChecked", Selector: sel, Checked: got == "true"})
	default:
		c.resp.Code().Action(codegen.Action{Name: "assertValue", Selector: sel, Value: want})
	}
	c.resp.Result("%s has value %s", c.describe(target), clip.Quote(want))
	return nil
}
