package server_test

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/tools"
)

// TestHardeningResourceURIEcho (issue 29, item 9): resources/read of an
// unknown 100,000-character URI is "resource not found" quoting at most 100
// of its characters (with its length), over stdio and Streamable HTTP; a
// published resource with a URI over 100 characters still reads.
func TestHardeningResourceURIEcho(t *testing.T) {
	long := tools.FileURIPrefix + strings.Repeat("A", 100000)
	runs := regexp.MustCompile(`A+`)
	check := func(t *testing.T, c *client.Client, uri string) {
		t.Helper()
		_, err := readResource(c, uri)
		if err == nil {
			t.Fatal("resources/read of an unknown URI succeeded")
		}
		if !errors.Is(err, mcp.ErrResourceNotFound) && !errors.Is(err, mcp.ErrInvalidParams) {
			t.Fatalf("resources/read: %v, want resource not found", err)
		}
		msg := err.Error()
		if len(msg) > 400 {
			t.Fatalf("error is %d chars: %.300s…", len(msg), msg)
		}
		for _, r := range runs.FindAllString(msg, -1) {
			if len(r) > 100 {
				t.Fatalf("error quotes %d characters of the URI: %s", len(r), msg)
			}
		}
		if !strings.Contains(msg, fmt.Sprintf("(%d chars)", len(uri))) {
			t.Fatalf("error does not give the URI's length: %s", msg)
		}
	}

	t.Run("stdio", func(t *testing.T) {
		c, _ := inProcess(t)
		check(t, c.Client, long)
	})

	t.Run("http", func(t *testing.T) {
		mcptest.Chromium(t)
		_, tmp := serverEnv(t)
		t.Setenv("TMPDIR", tmp)
		h := mcptest.StartHTTP(t, mcptest.HTTPOptions{Args: httpArgs("--http-auth-token", tokenA, "--output-dir", tmp+"/out")})
		a := h.Connect(t, mcptest.ConnectOptions{Token: tokenA})
		check(t, a.Client.Client, long)

		// A long URI that names a resource of the session is not touched.
		name := strings.Repeat("n", 120) + ".json"
		res := a.Call(t, "browser_evaluate", map[string]any{"function": "() => 42", "filename": name})
		link := fileLink(t, res)
		if link.URI != tools.FileURIPrefix+name {
			t.Fatalf("link %q", link.URI)
		}
		if got, _ := readBytes(t, a.Client.Client, link.URI); strings.TrimSpace(string(got)) != "42" {
			t.Fatalf("resources/read of %s: %q", link.URI, got)
		}
		check(t, a.Client.Client, link.URI+strings.Repeat("A", 200))
	})
}
