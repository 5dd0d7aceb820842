package tools

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestCookieDomainPolicy(t *testing.T) {
	cases := []struct {
		name, page, domain, want string // want "" = allowed
	}{
		{"host-only default", "https://shop.example.com/cart", "", ""},
		{"same host", "https://shop.example.com/", "shop.example.com", ""},
		{"parent domain", "https://shop.example.com/", ".example.com", ""},
		{"parent without dot", "https://shop.example.com/", "example.com", ""},
		{"case", "https://Shop.Example.com/", "EXAMPLE.com", ""},
		{"ip host", "http://127.0.0.1:8080/", "127.0.0.1", ""},
		{"localhost", "http://localhost:3000/", "localhost", ""},
		{"foreign site", "https://shop.example.com/", "example.org", "not the current page's site"},
		{"sibling", "https://shop.example.com/", "mail.example.com", "not the current page's site"},
		{"suffix trick", "https://notexample.com/", "example.com", "not the current page's site"},
		{"top-level domain", "https://shop.example.com/", "com", "not the current page's site"},
		{"parent of an ip", "http://10.0.0.1/", "0.0.1", "not the current page's site"},
		{"blank page", "about:blank", "", "not a web page"},
		{"file page", "file:///tmp/x.html", "", "not a web page"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := cookieDomainAllowed(tc.page, tc.domain)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
}

func TestDomainMatches(t *testing.T) {
	for _, tc := range []struct {
		cookie, filter string
		want           bool
	}{
		{".example.com", "example.com", true},
		{"a.example.com", "example.com", true},
		{"example.com", ".example.com", true},
		{"notexample.com", "example.com", false},
		{"example.com", "a.example.com", false},
	} {
		if got := domainMatches(tc.cookie, tc.filter); got != tc.want {
			t.Errorf("domainMatches(%q, %q) = %v", tc.cookie, tc.filter, got)
		}
	}
}

func TestCheckStorageState(t *testing.T) {
	cases := []struct {
		name, doc, want string // want "" = valid
	}{
		{"empty state", `{"cookies": [], "origins": []}`, ""},
		{"playwright's shape", `{"cookies": [{"name": "a", "value": "b", "domain": ".x.test", "path": "/", "expires": -1, "httpOnly": false, "secure": true, "sameSite": "Lax"}],
			"origins": [{"origin": "https://x.test", "localStorage": [{"name": "k", "value": "v"}]}]}`, ""},
		{"not json", `{"cookies": [`, "not JSON"},
		{"array", `[]`, "not a JSON object"},
		{"null", `null`, "not a JSON object"},
		{"unknown key", `{"cookies": [], "sessions": []}`, `unknown key "sessions"`},
		{"cookies not array", `{"cookies": {}}`, `"cookies" must be an array`},
		{"cookie without value", `{"cookies": [{"name": "a", "domain": "x", "path": "/"}]}`, `"value" must be a string`},
		{"cookie without domain", `{"cookies": [{"name": "a", "value": "", "domain": "", "path": "/"}]}`, "must not be empty"},
		{"expires string", `{"cookies": [{"name": "a", "value": "", "domain": "x", "path": "/", "expires": "soon"}]}`, `"expires" must be a number`},
		{"bad sameSite", `{"cookies": [{"name": "a", "value": "", "domain": "x", "path": "/", "sameSite": "lax"}]}`, "Strict, Lax or None"},
		{"origin not url", `{"origins": [{"origin": "x.test", "localStorage": []}]}`, "not an http(s) origin"},
		{"origin missing", `{"origins": [{"localStorage": []}]}`, `"origin" is missing`},
		{"item without value", `{"origins": [{"origin": "https://x.test", "localStorage": [{"name": "k"}]}]}`, "name and value must be strings"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := checkStorageState([]byte(tc.doc))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
}

// TestStorageStateErrorsKeepTheirCause checks the decoder's error stays in
// the chain (wrapped, not flattened to text).
func TestStorageStateErrorsKeepTheirCause(t *testing.T) {
	_, _, err := checkStorageState([]byte(`{"cookies": [`))
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		t.Fatalf("truncated JSON: %v (%T) does not wrap a *json.SyntaxError", err, err)
	}
	_, _, err = checkStorageState([]byte(`{"origins": 5}`))
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		t.Fatalf("origins of the wrong type: %v (%T) does not wrap a *json.UnmarshalTypeError", err, err)
	}
}
