package page

import (
	"context"
	"errors"
	"reflect"
	"strings"

	"github.com/mxschmitt/playwright-go"
)

// Reads for test assertions (--caps=testing): what is visible, an
// element's value, and the locator a test would use for an element.

func visible(loc playwright.Locator) playwright.Locator {
	return loc.Filter(playwright.LocatorFilterOptions{Visible: playwright.Bool(true)})
}

// CountVisibleByRole counts the visible elements with the ARIA role and
// accessible name (matched as Playwright's getByRole does by default:
// case-insensitive substring).
func (t *Tab) CountVisibleByRole(ctx context.Context, role, name string) (int, error) {
	loc := visible(t.p.GetByRole(playwright.AriaRole(role), playwright.PageGetByRoleOptions{Name: name}))
	return t.count(ctx, loc)
}

// ByRoleSelector is the selector Playwright's Normalize gives the elements
// with the ARIA role and accessible name: what the code of an assertion on
// them prints (upstream's browser_verify_element_visible).
func (t *Tab) ByRoleSelector(ctx context.Context, role, name string) (string, error) {
	return t.normalized(ctx, t.p.GetByRole(playwright.AriaRole(role), playwright.PageGetByRoleOptions{Name: name}))
}

// VisibleTextSelector is ByRoleSelector for the visible elements that
// contain text.
func (t *Tab) VisibleTextSelector(ctx context.Context, text string) (string, error) {
	return t.normalized(ctx, visible(t.p.GetByText(text)))
}

func (t *Tab) normalized(ctx context.Context, loc playwright.Locator) (string, error) {
	n, err := call(ctx, t.c, "resolve a selector", stopOn{modal: t, bound: t.c.env.ActionTimeout}, func() (playwright.Locator, error) { return loc.Normalize(), nil })
	if err != nil {
		return "", err
	}
	return selectorOf(n)
}

// ItemText is the text content of the first visible element inside the
// element that contains text: what an ARIA snapshot of the list item shows.
func (e *Element) ItemText(ctx context.Context, text string) (string, error) {
	return call(ctx, e.tab.c, "read an item of "+e.Target, stopOn{modal: e.tab, bound: e.tab.c.env.ActionTimeout}, func() (string, error) {
		return visible(e.loc.GetByText(text)).First().TextContent()
	})
}

// CountVisibleText counts the visible elements that contain text
// (Playwright's getByText).
func (t *Tab) CountVisibleText(ctx context.Context, text string) (int, error) {
	return t.count(ctx, visible(t.p.GetByText(text)))
}

// CountVisibleText counts the visible elements inside the element that
// contain text.
func (e *Element) CountVisibleText(ctx context.Context, text string) (int, error) {
	return e.tab.count(ctx, visible(e.loc.GetByText(text)))
}

// IsVisible reports whether the element is visible.
func (e *Element) IsVisible(ctx context.Context) (bool, error) {
	return call(ctx, e.tab.c, "check that "+e.Target+" is visible", stopOn{modal: e.tab}, func() (bool, error) { return e.loc.IsVisible() })
}

// IsChecked reports whether a checkbox or radio is checked.
func (e *Element) IsChecked(ctx context.Context) (bool, error) {
	return call(ctx, e.tab.c, "read whether "+e.Target+" is checked", stopOn{modal: e.tab}, func() (bool, error) { return e.loc.IsChecked() })
}

// InputValue is the value of an input, textarea or select.
func (e *Element) InputValue(ctx context.Context) (string, error) {
	return call(ctx, e.tab.c, "read the value of "+e.Target, stopOn{modal: e.tab}, func() (string, error) { return e.loc.InputValue() })
}

// SelectedLabel is the label of a <select>'s first selected option; ok is
// false when the element is no select or nothing is selected. It is read
// with Playwright's own engines (its utility world), not a script in the
// page's.
func (e *Element) SelectedLabel(ctx context.Context) (label string, ok bool, err error) {
	t := e.tab
	if n, err := t.count(ctx, e.loc.Locator("xpath=self::select")); err != nil || n == 0 {
		return "", false, err
	}
	opt := e.loc.Locator("option:checked").First()
	if n, err := t.count(ctx, opt); err != nil || n == 0 {
		return "", false, err
	}
	// An option's label is its label attribute when not empty, else its
	// text with white space stripped and collapsed.
	attr, err := call(ctx, t.c, "read the label of "+e.Target, stopOn{modal: t}, func() (string, error) { return opt.GetAttribute("label") })
	if err != nil {
		return "", false, err
	}
	if attr != "" {
		return attr, true, nil
	}
	text, err := call(ctx, t.c, "read the label of "+e.Target, stopOn{modal: t}, func() (string, error) { return opt.TextContent() })
	if err != nil {
		return "", false, err
	}
	return strings.Join(strings.FieldsFunc(text, isASCIISpace), " "), true, nil
}

// isASCIISpace is HTML's ASCII white space.
func isASCIISpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\f' || r == '\r'
}

// Selector is Playwright's resolved selector of the element, as a test's
// locator is printed from it, e.g. internal:role=button[name="Submit"i]
// for a ref.
//
// A ref's selector is resolved once while the page has not changed since
// the snapshot that named it (a click and then a type into the same field,
// a field typed into again): Playwright makes it from the element and the
// page around it, both as they were.
func (e *Element) Selector(ctx context.Context) (string, error) {
	sel, seq := e.tab.knownSelector(e.Target)
	if sel != "" {
		return sel, nil
	}
	sel, err := e.resolveSelector(ctx)
	if err == nil {
		e.tab.keepSelector(e.Target, sel, seq)
		e.tab.c.env.Log.Debug().Int("tab", e.tab.ID).Str("ref", e.Target).Msg("act: resolved the selector of a ref")
	}
	return sel, err
}

func (e *Element) resolveSelector(ctx context.Context) (string, error) {
	// Normalize asks the driver; it falls back to the selector as it is
	// when the driver cannot resolve it.
	op := "resolve the selector of " + e.Target
	normalize := func() (playwright.Locator, error) { return e.loc.Normalize(), nil }
	loc, err := call(ctx, e.tab.c, op, stopOn{modal: e.tab}, normalize)
	if errors.Is(err, ErrModal) && e.tab.onlyFileChoosers() {
		// A file chooser (a click that opened one, while this was
		// resolved beside it) does not block the page, as a dialog does:
		// resolve past it, bounded like an action.
		loc, err = call(ctx, e.tab.c, op, stopOn{bound: e.tab.c.env.ActionTimeout}, normalize)
	}
	if err != nil {
		return "", err
	}
	return selectorOf(loc)
}

// onlyFileChoosers reports whether the tab's open modal states are all file
// choosers (and there is one).
func (t *Tab) onlyFileChoosers() bool {
	ms := t.Modals()
	for _, m := range ms {
		if m.Kind != ModalFileChooser {
			return false
		}
	}
	return len(ms) > 0
}

// selectorOf reads a locator's selector. playwright-go has no accessor and
// no asLocator (Playwright's selector → code printer), both of which
// upstream uses; the field is stable in the pinned version, and a change
// makes this fail cleanly rather than print something wrong.
func selectorOf(loc playwright.Locator) (string, error) {
	v := reflect.ValueOf(loc)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return "", errors.New("playwright-go's locator has no selector field")
	}
	f := v.FieldByName("selector")
	if !f.IsValid() || f.Kind() != reflect.String {
		return "", errors.New("playwright-go's locator has no selector field")
	}
	return f.String(), nil
}
