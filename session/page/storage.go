package page

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/mxschmitt/playwright-go"
)

// Cookies, Web Storage and storage state of a generation. A generation's
// browser context is the session's own, so nothing here is visible to
// another session.

// Cookie is a cookie of the generation's browser context.
type Cookie struct {
	Name   string
	Value  string
	Domain string
	Path   string
	// Expires is a Unix time in seconds; zero or negative for a session
	// cookie.
	Expires  float64
	HTTPOnly bool
	Secure   bool
	// SameSite is Strict, Lax or None; empty when the browser did not say.
	SameSite string
}

// NewCookie is a cookie to set: either host-only for URL, or for Domain
// and Path.
type NewCookie struct {
	Name  string
	Value string
	// URL scopes the cookie to its host; if empty, Domain and Path do.
	URL string
	// Domain (a leading dot includes subdomains) and Path are used when URL
	// is empty.
	Domain string
	Path   string
	// Expires is a Unix time in seconds; if nil, a session cookie.
	Expires *float64
	// HTTPOnly and Secure: if nil, the browser's default (false).
	HTTPOnly *bool
	Secure   *bool
	// SameSite is Strict, Lax or None; if empty, the browser's default.
	SameSite string
}

// Cookies returns every cookie of the browser context.
func (c *Context) Cookies(ctx context.Context) ([]Cookie, error) {
	pc, err := call(ctx, c, "read cookies", stopOn{}, func() ([]playwright.Cookie, error) { return c.bctx.Cookies() })
	if err != nil {
		return nil, err
	}
	out := make([]Cookie, len(pc))
	for i, k := range pc {
		out[i] = Cookie{Name: k.Name, Value: k.Value, Domain: k.Domain, Path: k.Path, Expires: k.Expires, HTTPOnly: k.HttpOnly, Secure: k.Secure}
		if k.SameSite != nil {
			out[i].SameSite = string(*k.SameSite)
		}
	}
	return out, nil
}

// AddCookie sets a cookie. The browser may drop it silently (SameSite=None
// without Secure, an expiry in the past): read it back to be sure.
func (c *Context) AddCookie(ctx context.Context, nc NewCookie) error {
	pc := playwright.OptionalCookie{Name: nc.Name, Value: nc.Value, Expires: nc.Expires, HttpOnly: nc.HTTPOnly, Secure: nc.Secure}
	if nc.URL != "" {
		pc.URL = &nc.URL
	} else {
		pc.Domain, pc.Path = &nc.Domain, &nc.Path
	}
	if nc.SameSite != "" {
		ss := playwright.SameSiteAttribute(nc.SameSite)
		pc.SameSite = &ss
	}
	return run(ctx, c, "set cookie "+nc.Name, stopOn{}, func() error { return c.bctx.AddCookies([]playwright.OptionalCookie{pc}) })
}

// DeleteCookies deletes every cookie named name.
func (c *Context) DeleteCookies(ctx context.Context, name string) error {
	return run(ctx, c, "delete cookie "+name, stopOn{}, func() error {
		return c.bctx.ClearCookies(playwright.BrowserContextClearCookiesOptions{Name: name})
	})
}

// ClearCookies deletes every cookie.
func (c *Context) ClearCookies(ctx context.Context) error {
	return run(ctx, c, "clear cookies", stopOn{}, func() error { return c.bctx.ClearCookies() })
}

// StorageState is the browser context's cookies and localStorage in Playwright's
// storage state format.
type StorageState struct {
	// JSON is the state as Playwright writes it to a file.
	JSON []byte
	// Cookies and Origins count its cookies and the origins whose
	// localStorage it holds.
	Cookies int
	Origins int
}

// StorageState reads the generation's cookies and localStorage.
func (c *Context) StorageState(ctx context.Context) (StorageState, error) {
	return call(ctx, c, "save storage state", stopOn{}, func() (StorageState, error) {
		// Playwright hands out the state as it would save it only through a
		// file: a private one, removed when the call ends (not when the
		// caller stops waiting).
		dir, err := c.env.TempDir("state-")
		if err != nil {
			return StorageState{}, err
		}
		defer os.RemoveAll(dir)
		p := filepath.Join(dir, "state.json")
		st, err := c.bctx.StorageState(playwright.BrowserContextStorageStateOptions{Path: &p})
		if err != nil {
			return StorageState{}, err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return StorageState{}, fmt.Errorf("read the storage state: %w", err)
		}
		return StorageState{JSON: b, Cookies: len(st.Cookies), Origins: len(st.Origins)}, nil
	})
}

// SetStorageState replaces the generation's cookies and localStorage with
// state (Playwright's storage state JSON): the earlier ones are cleared.
// It returns once the open tabs see the restored localStorage.
func (c *Context) SetStorageState(ctx context.Context, state []byte) error {
	err := run(ctx, c, "restore storage state", stopOn{}, func() error {
		// Playwright takes a state only from a file: a private one holding
		// exactly the bytes the caller checked.
		dir, err := c.env.TempDir("state-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		p := filepath.Join(dir, "state.json")
		if err := os.WriteFile(p, state, 0o600); err != nil {
			return fmt.Errorf("stage the storage state: %w", err)
		}
		return c.bctx.SetStorageState(p)
	})
	if err != nil {
		return err
	}
	c.awaitStorage(ctx, state)
	return nil
}

// storageSeenWithin bounds how long SetStorageState waits for one open tab
// to see the restored localStorage.
const storageSeenWithin = 2 * time.Second

// awaitStorage waits until every open tab on a web origin sees that
// origin's localStorage as state has it (none when state has no entry: the
// restore cleared it). Playwright restores the storage from a page of its
// own; Chromium tells the other pages of the origin asynchronously, so a
// tab read at once may still show the storage from before, or only the
// clear. A tab that does not catch up within storageSeenWithin, or cannot
// be read, is left as it is: the storage itself is restored.
func (c *Context) awaitStorage(ctx context.Context, state []byte) {
	var st struct {
		Origins []playwright.Origin `json:"origins"`
	}
	if json.Unmarshal(state, &st) != nil {
		return
	}
	want := map[string]map[string]string{}
	for _, o := range st.Origins {
		m := map[string]string{}
		for _, kv := range o.LocalStorage {
			m[kv.Name] = kv.Value
		}
		want[o.Origin] = m
	}
	for _, t := range c.Tabs() {
		u, err := url.Parse(t.URL())
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			continue
		}
		exp := want[u.Scheme+"://"+u.Host]
		deadline := time.Now().Add(storageSeenWithin)
		for {
			// A page busy with its own script does not hold the answer
			// past the bound.
			rctx, cancel := context.WithDeadline(ctx, deadline)
			items, err := t.StorageItems(rctx, LocalStorage)
			cancel()
			if err != nil || sameItems(items, exp) || time.Now().After(deadline) {
				break
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
}

// sameItems reports whether items hold exactly the pairs of want.
func sameItems(items []StorageItem, want map[string]string) bool {
	if len(items) != len(want) {
		return false
	}
	for _, it := range items {
		if v, ok := want[it.Key]; !ok || v != it.Value {
			return false
		}
	}
	return true
}

// StorageArea is a page's Web Storage.
type StorageArea string

// The two Web Storage areas of a page.
const (
	LocalStorage   StorageArea = "local"
	SessionStorage StorageArea = "session"
)

// StorageItem is one key-value pair of a Web Storage area.
type StorageItem struct {
	Key   string
	Value string
}

// webStorageJS runs one localStorage/sessionStorage operation on the page's
// storage (from the isolated world).
const webStorageJS = `([kind, op, key, value]) => {
	let s;
	try {
		s = kind === 'local' ? window.localStorage : window.sessionStorage;
	} catch (e) {
		return { error: 'this page has no ' + kind + 'Storage (' + e.message + '): navigate to a web page first' };
	}
	switch (op) {
	case 'list': {
		const out = [];
		for (let i = 0; i < s.length; i++) { const k = s.key(i); out.push([k, s.getItem(k)]); }
		return { items: out };
	}
	case 'get': return { value: s.getItem(key) };
	case 'set':
		try { s.setItem(key, value); } catch (e) { return { error: e.message }; }
		return {};
	case 'delete': { const had = s.getItem(key) !== null; s.removeItem(key); return { had }; }
	case 'clear': { const n = s.length; s.clear(); return { n }; }
	}
}`

// webStorage runs op on the tab's area and returns the script's result; an
// error the page reports (no storage on this page, quota) is a *PageError.
func (t *Tab) webStorage(ctx context.Context, area StorageArea, op, key, value string) (map[string]any, error) {
	name := string(area) + "Storage"
	// In the tab's isolated world: the storage is the page's, the calls
	// are not seen by a page that wraps Storage's methods.
	raw, err := t.isolated(ctx, name+" "+op, webStorageJS, []any{string(area), op, key, value})
	if err != nil {
		return nil, err
	}
	res, _ := raw.(map[string]any)
	if e, ok := res["error"].(string); ok {
		return nil, &PageError{Op: name + " " + op, Msg: e}
	}
	return res, nil
}

// StorageItems lists the items of the tab's area, in storage order.
func (t *Tab) StorageItems(ctx context.Context, area StorageArea) ([]StorageItem, error) {
	res, err := t.webStorage(ctx, area, "list", "", "")
	if err != nil {
		return nil, err
	}
	items, _ := res["items"].([]any)
	out := make([]StorageItem, 0, len(items))
	for _, it := range items {
		kv, _ := it.([]any)
		if len(kv) != 2 {
			continue
		}
		k, _ := kv[0].(string)
		v, _ := kv[1].(string)
		out = append(out, StorageItem{Key: k, Value: v})
	}
	return out, nil
}

// StorageItem reads one item of the tab's area; ok is false when it is not
// set.
func (t *Tab) StorageItem(ctx context.Context, area StorageArea, key string) (value string, ok bool, err error) {
	res, err := t.webStorage(ctx, area, "get", key, "")
	if err != nil {
		return "", false, err
	}
	value, ok = res["value"].(string)
	return value, ok, nil
}

// SetStorageItem sets one item of the tab's area.
func (t *Tab) SetStorageItem(ctx context.Context, area StorageArea, key, value string) error {
	_, err := t.webStorage(ctx, area, "set", key, value)
	return err
}

// RemoveStorageItem removes one item of the tab's area; had says whether it
// was set.
func (t *Tab) RemoveStorageItem(ctx context.Context, area StorageArea, key string) (had bool, err error) {
	res, err := t.webStorage(ctx, area, "delete", key, "")
	if err != nil {
		return false, err
	}
	had, _ = res["had"].(bool)
	return had, nil
}

// ClearStorage removes every item of the tab's area and returns how many
// there were.
func (t *Tab) ClearStorage(ctx context.Context, area StorageArea) (int, error) {
	res, err := t.webStorage(ctx, area, "clear", "", "")
	if err != nil {
		return 0, err
	}
	n, _ := toFloat(res["n"])
	return int(n), nil
}
