package server

import (
	"encoding/json"
	"net/url"
	"regexp"

	"github.com/cloakmcp/cloakbrowser-mcp/pkg/config"
)

// credentialKey names config fields whose values are credentials: shown
// by browser_get_config as "<redacted>".
var credentialKey = regexp.MustCompile(`(?i)token|passphrase|password|headers|auth|secret`)

// shownConfig is the configuration browser_get_config answers with: cfg as
// JSON with every credential (auth tokens, the PFX passphrase, CDP headers,
// passwords in URLs) replaced, and each secret's value shown as
// <secret>NAME</secret>.
func shownConfig(cfg config.Config) any {
	b, err := json.Marshal(cfg)
	if err != nil {
		return map[string]string{"error": err.Error()}
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return map[string]string{"error": err.Error()}
	}
	if s, ok := m["Secrets"].(map[string]any); ok {
		for k := range s {
			s[k] = "<secret>" + k + "</secret>"
		}
	}
	return redactConfig(m)
}

func redactConfig(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if k == "Secrets" {
				continue // already shown as <secret>NAME</secret>
			}
			if credentialKey.MatchString(k) && !empty(val) {
				x[k] = "<redacted>"
				continue
			}
			x[k] = redactConfig(val)
		}
	case []any:
		for i := range x {
			x[i] = redactConfig(x[i])
		}
	case string:
		if u, err := url.Parse(x); err == nil && u.User != nil && u.Host != "" {
			if _, has := u.User.Password(); has {
				u.User = url.UserPassword(u.User.Username(), "redacted")
				return u.String()
			}
		}
	}
	return v
}

func empty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	case bool:
		return !x
	}
	return false
}
