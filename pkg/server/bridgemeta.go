package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/clip"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/outdir"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/textdist"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/config"
	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

// The TypeScript bridge's per-session settings: an HTTP client may put an
// object under _meta[MetaKeys[i]] of its initialize request. Every key of
// the bridge is either honoured, checked as its flag is, or refused with an
// error naming it; keys of _meta that are not ours belong to other
// software and are only logged (debug).

// bridgeKeys are the keys of the bridge's object, in its documentation's
// order.
var bridgeKeys = []string{"proxyServer", "proxyBypass", "geoipProxyMatch", "headless", "humanize", "humanPreset",
	"userDataDir", "contextOptions", "extensionPaths", "extensionMode", "profileDirName", "cdpEnabled"}

// bridgeMeta is the bridge object of one initialize request, decoded. A
// nil field was not sent (or was null).
type bridgeMeta struct {
	// key is the MetaKeys entry that carried the object ("" when none).
	key string

	CDPEnabled     *bool
	Headless       *bool
	ProxyServer    *string
	ProxyBypass    *string
	UserDataDir    *string
	ContextOptions json.RawMessage

	// others are the _meta keys that are not ours, for the debug log.
	others []string
}

// settings are the keys that shape the session's browser (beyond CDP).
func (m bridgeMeta) settings() []string {
	var out []string
	add := func(k string, set bool) {
		if set {
			out = append(out, k)
		}
	}
	add("proxyServer", m.ProxyServer != nil)
	add("proxyBypass", m.ProxyBypass != nil)
	add("headless", m.Headless != nil)
	add("userDataDir", m.UserDataDir != nil)
	add("contextOptions", m.ContextOptions != nil)
	return out
}

// session is the part of m that config.Config.WithSession applies.
func (m bridgeMeta) session() config.Session {
	return config.Session{ProxyServer: m.ProxyServer, ProxyBypass: m.ProxyBypass, Headless: m.Headless, ContextOptions: m.ContextOptions}
}

// metaError is a refused setting of the bridge object: it names the key as
// the client sent it.
type metaError struct {
	meta, field string
	err         error
}

func (e *metaError) Error() string {
	where := fmt.Sprintf("initialize _meta[%q]", e.meta)
	if e.field != "" {
		where += "." + e.field
	}
	return where + ": " + e.err.Error()
}

func (e *metaError) Unwrap() error { return e.err }

// parseBridgeMeta decodes the bridge object of an initialize request's
// params. Malformed params are left to mcp-go, which answers them itself.
func parseBridgeMeta(params json.RawMessage) (bridgeMeta, error) {
	var m bridgeMeta
	if len(params) == 0 {
		return m, nil
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return m, nil
	}
	var raw json.RawMessage
	for k, v := range p.Meta {
		if !slices.Contains(MetaKeys, k) {
			m.others = append(m.others, k)
			continue
		}
		if m.key != "" {
			return m, fmt.Errorf("initialize _meta has both %q and %q: send the session's settings under one of them", MetaKeys[0], MetaKeys[1])
		}
		m.key, raw = k, v
	}
	sort.Strings(m.others)
	if m.key == "" || string(raw) == "null" {
		return m, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return m, &metaError{meta: m.key, err: fmt.Errorf("must be an object of settings (%s)", strings.Join(bridgeKeys, ", "))}
	}
	fields := make([]string, 0, len(obj))
	for f := range obj {
		fields = append(fields, f)
	}
	sort.Strings(fields) // the first refusal is the same every time
	for _, f := range fields {
		v := obj[f]
		if string(v) == "null" {
			continue
		}
		if err := m.set(f, v); err != nil {
			return m, &metaError{meta: m.key, field: f, err: err}
		}
	}
	return m, nil
}

// set decodes one field of the bridge object into m, or refuses it.
func (m *bridgeMeta) set(f string, v json.RawMessage) error {
	boolean := func() (*bool, error) {
		var b bool
		if json.Unmarshal(v, &b) != nil {
			return nil, fmt.Errorf("must be true or false, got %s", clip.Quote(string(v)))
		}
		return &b, nil
	}
	str := func() (*string, error) {
		var s string
		if json.Unmarshal(v, &s) != nil || strings.TrimSpace(s) == "" {
			return nil, fmt.Errorf("must be a non-empty string, got %s", clip.Quote(string(v)))
		}
		s = strings.TrimSpace(s)
		return &s, nil
	}
	var err error
	switch f {
	case "cdpEnabled":
		m.CDPEnabled, err = boolean()
	case "headless":
		m.Headless, err = boolean()
	case "proxyServer":
		m.ProxyServer, err = str()
	case "proxyBypass":
		m.ProxyBypass, err = str()
	case "userDataDir":
		m.UserDataDir, err = str()
	case "contextOptions":
		if len(v) == 0 || v[0] != '{' {
			return fmt.Errorf("must be an object of context options (%s)", strings.Join(config.SessionContextKeys, ", "))
		}
		m.ContextOptions = v
	case "geoipProxyMatch":
		on, err := boolean()
		if err != nil {
			return err
		}
		if *on {
			return errors.New("is not supported (as --geoip-proxy-match): it needs CloakBrowser's GeoIP database, which this server does not download; remove it and set contextOptions.locale and contextOptions.timezoneId for the proxy's region")
		}
	case "humanize":
		on, err := boolean()
		if err != nil {
			return err
		}
		if *on {
			return errors.New("is not supported: humanized input is part of CloakBrowser's Node wrapper, which this server does not run; remove it (or send false)")
		}
	case "humanPreset":
		s, err := str()
		if err != nil {
			return err
		}
		if *s != "default" && *s != "careful" {
			return fmt.Errorf("must be \"default\" or \"careful\", got %s", clip.Quote(*s))
		}
		return errors.New("is not supported: it applies only with humanize, which this server does not support; remove it")
	case "extensionPaths":
		return errors.New("is not supported: this server loads no Chrome extensions into a session's browser; remove it")
	case "extensionMode":
		return errors.New("is not supported (as --extension): the Playwright Extension needs @playwright/mcp's Node server; remove it")
	case "profileDirName":
		return errors.New("is not supported (as --profile-dir-name): it applies only to the Playwright Extension; remove it, and use userDataDir for a profile of the session's own")
	default:
		hint := ""
		if near := nearestKey(f); near != "" {
			hint = fmt.Sprintf("did you mean %q? ", near)
		}
		return fmt.Errorf("is not a setting of this server; %sthe settings are %s", hint, strings.Join(bridgeKeys, ", "))
	}
	return err
}

// nearestKey is the bridge key closest to f (a typo or a case slip), or "".
func nearestKey(f string) string {
	best, bestD := "", 4
	for _, k := range bridgeKeys {
		if d := textdist.Levenshtein(strings.ToLower(f), strings.ToLower(k)); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// cdpRequested says whether a new HTTP session wants a CDP endpoint: the
// bridge object's cdpEnabled if set, else def (--cdp-enabled).
func (m bridgeMeta) cdpRequested(def bool) bool {
	if m.CDPEnabled != nil {
		return *m.CDPEnabled
	}
	return def
}

// sessionSetup is what a new HTTP session with settings of its own is made
// from: its configuration and the claim on its profile directory (release
// it if the session is not created; the session owns it otherwise).
type sessionSetup struct {
	cfg     session.Config
	release func()
}

// sessionSetupFor builds the configuration of a session whose initialize
// carried settings (m.settings() not empty) for principal. The settings are
// checked as their flags are; the profile directory must be in principal's
// own area of the output directory; a session that no longer fits the
// shared browser (its own proxy, window mode, profile or launch-level time
// zone) gets a browser of its own, never a context next to sessions that
// differ.
func (t *httpTransport) sessionSetupFor(ctx context.Context, principal string, m bridgeMeta) (*sessionSetup, error) {
	s := t.s
	if t.pool != nil || s.cfg.Attached() {
		for _, k := range []string{"proxyServer", "proxyBypass", "headless", "userDataDir"} {
			if slices.Contains(m.settings(), k) {
				return nil, &metaError{meta: m.key, field: k, err: errors.New("cannot apply: this server's sessions attach to browsers it does not launch (--browser-endpoint-pool, --cdp-endpoint or --endpoint); remove it")}
			}
		}
	}
	cfg, err := s.cfg.WithSession(m.session())
	if err != nil {
		var ke *config.KeyError
		if errors.As(err, &ke) {
			return nil, &metaError{meta: m.key, field: ke.Key, err: ke.Err}
		}
		return nil, &metaError{meta: m.key, err: err}
	}
	if m.Headless != nil && !*m.Headless && !hasDisplay(cfg.Launch.Env) {
		return nil, &metaError{meta: m.key, field: "headless", err: errors.New("false needs a display, and this server has none (DISPLAY is not set); start the server under Xvfb (xvfb-run) or remove it")}
	}
	sc := s.sessionConfigOf(cfg)
	sc.UserDataDir = ""
	setup := &sessionSetup{cfg: sc, release: func() {}}
	if m.UserDataDir != nil {
		dir, err := s.profileDir(principal, *m.UserDataDir)
		if err != nil {
			return nil, &metaError{meta: m.key, field: "userDataDir", err: err}
		}
		release, ok := t.profiles.claim(dir)
		if !ok {
			return nil, &metaError{meta: m.key, field: "userDataDir", err: fmt.Errorf("%s is in use by another session; close that session first (DELETE) or name another directory", dir)}
		}
		setup.cfg.UserDataDir, setup.release = dir, release
	}
	if t.shared != nil && t.shared.Fits(ctx, setup.cfg) {
		setup.cfg.Shared = t.shared
	}
	return setup, nil
}

// hasDisplay reports whether a headed browser we launch has a display to
// open its window on: always off Linux; on Linux DISPLAY or WAYLAND_DISPLAY
// in our environment (the browsers inherit it) or in env (launchOptions).
func hasDisplay(env map[string]string) bool {
	if runtime.GOOS != "linux" {
		return true
	}
	for _, k := range []string{"DISPLAY", "WAYLAND_DISPLAY"} {
		if os.Getenv(k) != "" || env[k] != "" {
			return true
		}
	}
	return false
}

// principalDirName matches the directory of a principal with a token
// (httpguard.PrincipalName).
var principalDirName = regexp.MustCompile(`^t-[0-9a-f]{12}$`)

// profileDir resolves a session's userDataDir for principal, creating it:
// a relative name is inside principal's area of the output directory (its
// own directory, or the output directory itself for token-less HTTP), an
// absolute one must be there too unless --allow-unrestricted-file-access.
// It can never be the area itself, another principal's directory or a
// path through a symlink, and is refused with --output-max-size, whose
// eviction would delete a profile's files.
func (s *Server) profileDir(principal, name string) (string, error) {
	if s.cfg.OutputMaxSize > 0 {
		return "", fmt.Errorf("is refused on this server: --output-max-size evicts old files of the output directory, a profile's among them; start it without --output-max-size to keep profiles")
	}
	a, err := outdir.Open(outdir.Options{Base: s.cfg.OutputDir, Principal: principal, Unrestricted: s.cfg.AllowUnrestrictedFileAccess})
	if err != nil {
		return "", err
	}
	defer a.Close()
	rel, dir, err := a.Resolve(name, "profile", "")
	if err != nil {
		return "", err
	}
	if rel == "." {
		return "", fmt.Errorf("%s is the output directory itself; name a directory inside it, e.g. \"profiles/shop\"", outdir.Quote(name))
	}
	// Whatever the area, a path in another principal's directory is theirs.
	base, err := filepath.Abs(orDefault(s.cfg.OutputDir, outdir.DefaultBase))
	if err != nil {
		return "", err
	}
	if r, err := filepath.Rel(base, dir); err == nil && filepath.IsLocal(r) {
		first := strings.SplitN(filepath.ToSlash(r), "/", 2)[0]
		if principalDirName.MatchString(first) && first != principal {
			return "", fmt.Errorf("%s is in another principal's directory; name a directory of your own, e.g. \"profiles/shop\"", outdir.Quote(name))
		}
	}
	if rel == "" { // unrestricted, outside the area
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", fmt.Errorf("create %s: %w", dir, err)
		}
		return dir, nil
	}
	// Created through the area's root, so a symlink leading out is refused;
	// then the whole path must be free of symlinks, since Chromium opens it
	// by name.
	if err := a.Root().MkdirAll(rel, 0o700); err != nil {
		return "", fmt.Errorf("create %s in %s: %w (a symlink leading out of it is refused)", outdir.Quote(rel), a.Dir(), err)
	}
	realArea, err := filepath.EvalSymlinks(a.Dir())
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(dir); err != nil || real != filepath.Join(realArea, rel) {
		return "", fmt.Errorf("%s passes through a symlink; name a plain directory inside %s", outdir.Quote(name), a.Dir())
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return "", fmt.Errorf("%s is not a directory", outdir.Quote(name))
	}
	return dir, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// profileClaims are the profile directories of live sessions of this
// process: two browsers on one profile would corrupt it (Chromium's own
// lock only tells the second to open a window in the first).
type profileClaims struct {
	mu    sync.Mutex
	inUse map[string]bool
}

// claim takes dir, or reports false if a session holds it. release gives
// it back (once; later calls do nothing).
func (p *profileClaims) claim(dir string) (release func(), ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.inUse[dir] {
		return nil, false
	}
	if p.inUse == nil {
		p.inUse = map[string]bool{}
	}
	p.inUse[dir] = true
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			delete(p.inUse, dir)
			p.mu.Unlock()
		})
	}, true
}
