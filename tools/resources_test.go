package tools

import (
	"net/url"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

func TestFileURI(t *testing.T) {
	for _, tc := range []struct{ name, rel, want string }{
		{"plain", "shot.png", "cloakbrowser-mcp://files/shot.png"},
		{"subdirectory", "shots/a.png", "cloakbrowser-mcp://files/shots/a.png"},
		{"space", "my shot.png", "cloakbrowser-mcp://files/my%20shot.png"},
		{"query and fragment characters", "a?b#c.png", "cloakbrowser-mcp://files/a%3Fb%23c.png"},
		{"percent", "100%.png", "cloakbrowser-mcp://files/100%25.png"},
		{"non-ASCII", "été.png", "cloakbrowser-mcp://files/%C3%A9t%C3%A9.png"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := fileURI(tc.rel)
			if got != tc.want {
				t.Fatalf("fileURI(%q) = %q, want %q", tc.rel, got, tc.want)
			}
			// mcp-go refuses a session resource whose URI does not parse.
			u, err := url.ParseRequestURI(got)
			if err != nil {
				t.Fatalf("%q does not parse: %v", got, err)
			}
			if u.Path != "/"+tc.rel {
				t.Fatalf("%q decodes to path %q, want /%s", got, u.Path, tc.rel)
			}
		})
	}
}

func TestFileMIMEAndText(t *testing.T) {
	for _, tc := range []struct {
		name, typ string
		text      bool
	}{
		{"a.png", "image/png", false},
		{"a.JPG", "image/jpeg", false},
		{"page.pdf", "application/pdf", false},
		{"trace.zip", "application/zip", false},
		{"state.json", "application/json", true},
		{"page.yml", "application/yaml", true},
		{"console.log", "text/plain", true},
		{"report.csv", "text/csv", true},
		{"blob.unknownext", "application/octet-stream", false},
		{"noext", "application/octet-stream", false},
	} {
		if got := fileMIME(tc.name); got != tc.typ {
			t.Errorf("fileMIME(%q) = %q, want %q", tc.name, got, tc.typ)
		}
		if got := textual(tc.typ); got != tc.text {
			t.Errorf("textual(%q) = %v, want %v", tc.typ, got, tc.text)
		}
	}
	if !textual("text/plain; charset=utf-8") || !textual("application/ld+json") || textual("not a type") {
		t.Error("textual: parameters, +json suffixes or a malformed type")
	}
}

// TestLinksFollowText: a resource_link never comes before the text, which
// drop-in clients read as the first item.
func TestLinksFollowText(t *testing.T) {
	r := &Response{}
	r.Result("- [Screenshot of viewport](./shot.png)")
	r.AddLink(mcp.NewResourceLink(fileURI("shot.png"), "shot.png", "Screenshot", "image/png"))
	r.AddImage("aGk=", "image/png")
	res := r.Build()
	if len(res.Content) != 3 {
		t.Fatalf("content: %#v", res.Content)
	}
	if tc, ok := res.Content[0].(mcp.TextContent); !ok || tc.Text != "### Result\n- [Screenshot of viewport](./shot.png)" {
		t.Fatalf("first item: %#v", res.Content[0])
	}
	if _, ok := res.Content[2].(mcp.ResourceLink); !ok {
		t.Fatalf("last item: %#v, want the link after the image", res.Content[2])
	}
}
