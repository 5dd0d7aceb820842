package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/codegen"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/clip"
	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
)

// storageTools are upstream's --caps=storage tools: cookies, web storage and
// storage state files. They act on the session's own browser context, so
// nothing one session writes is visible to another.
func storageTools() []*Tool {
	quiet := tabOpts{noPage: true}
	t := func(name string, fn func(*tabCall) error) *Tool {
		return &Tool{Def: upstreamDef(name), Cap: "storage", Handle: tabTool(name, quiet, fn)}
	}
	tools := []*Tool{
		t("browser_cookie_list", cookieList),
		t("browser_cookie_get", cookieGet),
		t("browser_cookie_set", cookieSet),
		t("browser_cookie_delete", cookieDelete),
		t("browser_cookie_clear", cookieClear),
		t("browser_storage_state", storageStateSave),
		t("browser_set_storage_state", storageStateRestore),
	}
	for _, kind := range []string{"local", "session"} {
		pre := "browser_" + kind + "storage_"
		for _, op := range []string{"list", "get", "set", "delete", "clear"} {
			tools = append(tools, t(pre+op, webStorage(kind, op)))
		}
	}
	return tools
}

// maxShownValue bounds a cookie or storage value printed inline.
const maxShownValue = 4096

func shownValue(v string) string {
	b, _ := json.Marshal(v)
	s := string(b)
	if len(s) > maxShownValue {
		s = s[:maxShownValue] + fmt.Sprintf("… (%d bytes)", len(v))
	}
	return s
}

func cookieLine(ck page.Cookie) string {
	var flags []string
	flags = append(flags, "domain="+ck.Domain, "path="+ck.Path)
	if ck.Expires > 0 {
		flags = append(flags, "expires="+time.Unix(int64(ck.Expires), 0).UTC().Format(time.RFC3339))
	} else {
		flags = append(flags, "session")
	}
	if ck.HTTPOnly {
		flags = append(flags, "httpOnly")
	}
	if ck.Secure {
		flags = append(flags, "secure")
	}
	if ck.SameSite != "" {
		flags = append(flags, "sameSite="+ck.SameSite)
	}
	return fmt.Sprintf("- %s=%s (%s)", ck.Name, shownValue(ck.Value), strings.Join(flags, ", "))
}

// domainMatches reports whether a cookie's domain is domain or one of its
// subdomains (RFC 6265 domain matching, a leading dot ignored).
func domainMatches(cookieDomain, domain string) bool {
	c := strings.ToLower(strings.TrimPrefix(cookieDomain, "."))
	d := strings.ToLower(strings.TrimPrefix(domain, "."))
	return c == d || strings.HasSuffix(c, "."+d)
}

func cookieList(c *tabCall) error {
	cookies, err := c.gen.Cookies(c.ctx)
	if err != nil {
		return fmt.Errorf("read cookies: %w", err)
	}
	c.code("await page.context().cookies();")
	domain, path := c.args.String("domain", ""), c.args.String("path", "")
	var lines []string
	for _, ck := range cookies {
		if domain != "" && !domainMatches(ck.Domain, domain) {
			continue
		}
		if path != "" && !strings.HasPrefix(ck.Path, path) {
			continue
		}
		lines = append(lines, cookieLine(ck))
	}
	if len(lines) == 0 {
		if domain != "" || path != "" {
			c.resp.Result("No cookies match")
		} else {
			c.resp.Result("No cookies")
		}
		return nil
	}
	c.resp.ResultText(strings.Join(lines, "\n"))
	return nil
}

func cookieGet(c *tabCall) error {
	name := c.args.String("name", "")
	cookies, err := c.gen.Cookies(c.ctx)
	if err != nil {
		return fmt.Errorf("read cookies: %w", err)
	}
	c.code("await page.context().cookies();")
	var lines []string
	for _, ck := range cookies {
		if ck.Name == name {
			lines = append(lines, cookieLine(ck))
		}
	}
	if len(lines) == 0 {
		c.resp.Result("Cookie %s not found", clip.Quote(name))
		return nil
	}
	c.resp.ResultText(strings.Join(lines, "\n"))
	return nil
}

// cookieDomainAllowed applies the cookie policy: a cookie may be set for the
// current page's host or a parent domain of it (what the page itself could
// set), never for an unrelated site, so a page cannot talk an agent into
// planting cookies elsewhere. It returns the page URL's origin.
func cookieDomainAllowed(pageURL, domain string) (origin string, err error) {
	u, err := url.Parse(pageURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return "", fmt.Errorf("the current page (%s) is not a web page: navigate to the cookie's site first — cookies are set for the current page's site", pageURL)
	}
	host := strings.ToLower(u.Hostname())
	origin = u.Scheme + "://" + u.Host
	if domain == "" {
		return origin, nil
	}
	d := strings.ToLower(strings.TrimPrefix(domain, "."))
	switch {
	case d == host:
		return origin, nil
	case net.ParseIP(host) != nil:
		// An IP address has no parent domains.
	case strings.HasSuffix(host, "."+d) && strings.Contains(d, "."):
		return origin, nil
	}
	return "", fmt.Errorf("cookie domain %s is not the current page's site %s: a cookie may only be set for the page's host or a parent domain of it; navigate to a page on %s first", clip.Quote(domain), host, d)
}

func cookieSet(c *tabCall) error {
	name, value := c.args.String("name", ""), c.args.String("value", "")
	if strings.TrimSpace(name) == "" {
		return errors.New("cookie name is empty")
	}
	domain := c.args.String("domain", "")
	origin, err := cookieDomainAllowed(c.tab.URL(), domain)
	if err != nil {
		return err
	}
	path := c.args.String("path", "/")
	if !strings.HasPrefix(path, "/") {
		return fmt.Errorf("cookie path %s must start with /", clip.Quote(path))
	}
	ck := page.NewCookie{Name: name, Value: value, SameSite: c.args.String("sameSite", "")}
	switch {
	case domain != "":
		ck.Domain, ck.Path = domain, path
	case path != "/":
		// A cookie set by URL gets the URL's directory as its path
		// ("/x" → "/"): the path the agent gave needs domain and path, the
		// page's host as upstream defaults it.
		u, _ := url.Parse(origin)
		ck.Domain, ck.Path = u.Hostname(), path
	default:
		ck.URL = origin + path
	}
	if c.args.Has("expires") {
		e := c.args.Number("expires", 0)
		ck.Expires = &e
	}
	if c.args.Has("httpOnly") {
		b := c.args.Bool("httpOnly", false)
		ck.HTTPOnly = &b
	}
	if c.args.Has("secure") {
		b := c.args.Bool("secure", false)
		ck.Secure = &b
	}
	if err := c.gen.AddCookie(c.ctx, ck); err != nil {
		return fmt.Errorf("set cookie %s: %w", name, err)
	}
	c.code("await page.context().addCookies([" + cookieCode(c, ck, origin, path) + "]);")
	// Chromium drops some cookies silently (SameSite=None without secure).
	cookies, err := c.gen.Cookies(c.ctx)
	if err != nil {
		return fmt.Errorf("read cookies: %w", err)
	}
	for _, got := range cookies {
		if got.Name == name && got.Path == path && (domain == "" || domainMatches(got.Domain, domain)) {
			c.resp.Result("Set cookie %s", strings.TrimPrefix(cookieLine(got), "- "))
			return nil
		}
	}
	return fmt.Errorf("the browser did not keep cookie %s (SameSite=None needs secure; an expiry in the past deletes it)", name)
}

// cookieCode is the cookie as upstream's code shows it (JSON, its keys in
// upstream's order): the domain defaults to the page's host.
func cookieCode(c *tabCall, ck page.NewCookie, origin, path string) string {
	domain := ck.Domain
	if domain == "" {
		if u, err := url.Parse(origin); err == nil {
			domain = u.Hostname()
		}
	}
	f := codegen.Fields{{Key: "name", Value: ck.Name}, {Key: "value", Value: ck.Value}, {Key: "domain", Value: domain}, {Key: "path", Value: path}}
	for _, k := range []string{"expires", "httpOnly", "secure", "sameSite"} {
		if c.args.Has(k) {
			f = append(f, codegen.Field{Key: k, Value: c.args.Raw(k)})
		}
	}
	return f.JSON()
}

func cookieDelete(c *tabCall) error {
	name := c.args.String("name", "")
	c.code("await page.context().clearCookies({ name: " + codegen.Quote(name) + " });")
	before, err := c.gen.Cookies(c.ctx)
	if err != nil {
		return fmt.Errorf("read cookies: %w", err)
	}
	n := 0
	for _, ck := range before {
		if ck.Name == name {
			n++
		}
	}
	if n == 0 {
		c.resp.Result("No cookie named %s", clip.Quote(name))
		return nil
	}
	if err := c.gen.DeleteCookies(c.ctx, name); err != nil {
		return fmt.Errorf("delete cookie %s: %w", name, err)
	}
	c.resp.Result("Deleted %d cookie(s) named %s", n, clip.Quote(name))
	return nil
}

func cookieClear(c *tabCall) error {
	before, err := c.gen.Cookies(c.ctx)
	if err != nil {
		return fmt.Errorf("read cookies: %w", err)
	}
	if err := c.gen.ClearCookies(c.ctx); err != nil {
		return fmt.Errorf("clear cookies: %w", err)
	}
	c.code("await page.context().clearCookies();")
	c.resp.Result("Cleared %d cookie(s)", len(before))
	return nil
}

func webStorage(kind, op string) func(*tabCall) error {
	area := page.StorageArea(kind)
	name := kind + "Storage"
	return func(c *tabCall) error {
		key, value := c.args.String("key", ""), c.args.String("value", "")
		// origin names the page's storage in responses.
		origin := func() string {
			u, err := url.Parse(c.tab.URL())
			if err != nil || u.Host == "" {
				return c.tab.URL()
			}
			return u.Scheme + "://" + u.Host
		}
		switch op {
		case "list":
			c.code("await page." + name + ".items();")
		case "get":
			c.code("await page." + name + ".getItem(" + codegen.Quote(key) + ");")
		case "set":
			c.code("await page." + name + ".setItem(" + codegen.Quote(key) + ", " + codegen.Quote(value) + ");")
		case "delete":
			c.code("await page." + name + ".removeItem(" + codegen.Quote(key) + ");")
		case "clear":
			c.code("await page." + name + ".clear();")
		}
		switch op {
		case "list":
			items, err := c.tab.StorageItems(c.ctx, area)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if len(items) == 0 {
				c.resp.Result("%s of %s is empty", name, origin())
				return nil
			}
			var b strings.Builder
			fmt.Fprintf(&b, "%s of %s:\n", name, origin())
			for _, it := range items {
				fmt.Fprintf(&b, "- %s: %s\n", shownValue(it.Key), shownValue(it.Value))
			}
			c.resp.ResultText(b.String())
		case "get":
			v, ok, err := c.tab.StorageItem(c.ctx, area, key)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if !ok {
				c.resp.Result("%s item %s is not set", name, clip.Quote(key))
				return nil
			}
			c.resp.Result("%s", shownValue(v))
		case "set":
			if err := c.tab.SetStorageItem(c.ctx, area, key, value); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			c.resp.Result("Set %s item %s", name, clip.Quote(key))
		case "delete":
			had, err := c.tab.RemoveStorageItem(c.ctx, area, key)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if !had {
				c.resp.Result("%s item %s was not set", name, clip.Quote(key))
				return nil
			}
			c.resp.Result("Deleted %s item %s", name, clip.Quote(key))
		case "clear":
			n, err := c.tab.ClearStorage(c.ctx, area)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			c.resp.Result("Cleared %d %s item(s) of %s", n, name, origin())
		}
		return nil
	}
}

func storageStateSave(c *tabCall) error {
	a, err := c.env.filesOf(c.sess)
	if err != nil {
		return err
	}
	defer a.Close()
	name := c.args.String("filename", "")
	if _, _, err := a.Resolve(name, "storage-state", ".json"); err != nil {
		return err
	}
	st, err := c.gen.StorageState(c.ctx)
	if err != nil {
		return fmt.Errorf("save storage state: %w", err)
	}
	p, err := a.Write(name, "storage-state", ".json", st.JSON)
	if err != nil {
		return err
	}
	c.code("await page.context().storageState({ path: " + codegen.Quote(c.env.link(p)) + " });")
	c.resp.Result("- [Storage state](%s): %d cookie(s), localStorage of %d origin(s)", c.env.link(p), st.Cookies, st.Origins)
	c.publish(p, "Storage state")
	return nil
}

// maxStateFile bounds a storage state file the server reads.
const maxStateFile = 32 << 20

// checkStorageState validates a storage state file's shape, so a malformed
// file fails with what is wrong instead of a driver error.
func checkStorageState(b []byte) (cookies, origins int, err error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return 0, 0, fmt.Errorf("not JSON (offset %d: %w)", se.Offset, err)
		}
		return 0, 0, fmt.Errorf("not a JSON object: %w", err)
	}
	if doc == nil {
		return 0, 0, errors.New("not a JSON object")
	}
	for k := range doc {
		switch k {
		case "cookies", "origins", "credentials":
		default:
			return 0, 0, fmt.Errorf("unknown key %s (a storage state has cookies and origins)", clip.Quote(k))
		}
	}
	var cs []map[string]any
	if raw, ok := doc["cookies"]; ok {
		if err := json.Unmarshal(raw, &cs); err != nil {
			return 0, 0, errors.New(`"cookies" must be an array of objects`)
		}
	}
	for i, ck := range cs {
		for _, f := range []string{"name", "value", "domain", "path"} {
			if _, ok := ck[f].(string); !ok {
				return 0, 0, fmt.Errorf("cookies[%d]: %q must be a string", i, f)
			}
		}
		if ck["name"] == "" || ck["domain"] == "" {
			return 0, 0, fmt.Errorf("cookies[%d]: name and domain must not be empty", i)
		}
		if v, ok := ck["expires"]; ok {
			if _, ok := v.(float64); !ok {
				return 0, 0, fmt.Errorf("cookies[%d]: \"expires\" must be a number", i)
			}
		}
		for _, f := range []string{"httpOnly", "secure"} {
			if v, ok := ck[f]; ok {
				if _, ok := v.(bool); !ok {
					return 0, 0, fmt.Errorf("cookies[%d]: %q must be a boolean", i, f)
				}
			}
		}
		if v, ok := ck["sameSite"]; ok {
			if s, _ := v.(string); s != "Strict" && s != "Lax" && s != "None" {
				return 0, 0, fmt.Errorf("cookies[%d]: \"sameSite\" must be Strict, Lax or None", i)
			}
		}
	}
	var os_ []struct {
		Origin       *string `json:"origin"`
		LocalStorage []struct {
			Name  *string `json:"name"`
			Value *string `json:"value"`
		} `json:"localStorage"`
	}
	if raw, ok := doc["origins"]; ok {
		if err := json.Unmarshal(raw, &os_); err != nil {
			return 0, 0, fmt.Errorf(`"origins" must be an array of {origin, localStorage: [{name, value}]}: %w`, err)
		}
	}
	for i, o := range os_ {
		if o.Origin == nil {
			return 0, 0, fmt.Errorf("origins[%d]: \"origin\" is missing", i)
		}
		u, err := url.Parse(*o.Origin)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return 0, 0, fmt.Errorf("origins[%d]: %s is not an http(s) origin", i, clip.Quote(*o.Origin))
		}
		for j, kv := range o.LocalStorage {
			if kv.Name == nil || kv.Value == nil {
				return 0, 0, fmt.Errorf("origins[%d].localStorage[%d]: name and value must be strings", i, j)
			}
		}
	}
	return len(cs), len(os_), nil
}

func storageStateRestore(c *tabCall) error {
	name := c.args.String("filename", "")
	a, err := c.env.filesOf(c.sess)
	if err != nil {
		return err
	}
	defer a.Close()
	// A relative name is read in the caller's own directory, an absolute
	// path from the input roots (as an upload), both through an os.Root.
	var b []byte
	p := name
	if filepath.IsAbs(name) {
		b, err = a.ReadInput(name, maxStateFile)
	} else {
		b, p, err = a.Read(name, maxStateFile)
	}
	if err != nil {
		return err
	}
	nc, no, err := checkStorageState(b)
	if err != nil {
		return fmt.Errorf("%s is not a storage state file: %w; nothing was changed", name, err)
	}
	if err := c.gen.SetStorageState(c.ctx, b); err != nil {
		return fmt.Errorf("restore storage state from %s: %w", name, err)
	}
	c.code("await page.context().setStorageState(" + codegen.Quote(name) + ");")
	c.resp.Result("Restored %d cookie(s) and localStorage of %d origin(s) from %s; the earlier cookies and localStorage were cleared", nc, no, c.env.link(p))
	return nil
}
