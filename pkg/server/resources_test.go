package server_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/httpguard"
	"github.com/cloakmcp/cloakbrowser-mcp/tools"
)

const listChanged = "notifications/resources/list_changed"

// fileLink checks that a tool result keeps its text first (upstream's
// answer, unchanged for drop-in clients) and links the file it wrote, and
// returns the link.
func fileLink(t *testing.T, res *mcp.CallToolResult) mcp.ResourceLink {
	t.Helper()
	if res.IsError || len(res.Content) == 0 {
		t.Fatalf("call failed: %s", mcptest.Text(res))
	}
	if _, ok := res.Content[0].(mcp.TextContent); !ok {
		t.Fatalf("first content item is %T, want the text", res.Content[0])
	}
	var links []mcp.ResourceLink
	for _, c := range res.Content {
		if l, ok := c.(mcp.ResourceLink); ok {
			links = append(links, l)
		}
	}
	if len(links) != 1 {
		t.Fatalf("want one resource_link, got %d in %#v", len(links), res.Content)
	}
	return links[0]
}

// noLink fails when a result links a file.
func noLink(t *testing.T, res *mcp.CallToolResult) {
	t.Helper()
	for _, c := range res.Content {
		if l, ok := c.(mcp.ResourceLink); ok {
			t.Fatalf("unexpected resource_link %s", l.URI)
		}
	}
}

// listed lists the session's resources by URI.
func listed(t *testing.T, c *client.Client) map[string]mcp.Resource {
	t.Helper()
	res, err := c.ListResources(t.Context(), mcp.ListResourcesRequest{})
	if err != nil {
		t.Fatalf("resources/list: %v", err)
	}
	out := map[string]mcp.Resource{}
	for _, r := range res.Resources {
		out[r.URI] = r
	}
	return out
}

func readResource(c *client.Client, uri string) (*mcp.ReadResourceResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return c.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: uri}})
}

// readBytes reads a resource and returns its bytes (a blob decoded, or the
// text) and whether it came as text.
func readBytes(t *testing.T, c *client.Client, uri string) ([]byte, bool) {
	t.Helper()
	res, err := readResource(c, uri)
	if err != nil {
		t.Fatalf("resources/read %s: %v", uri, err)
	}
	if len(res.Contents) != 1 {
		t.Fatalf("resources/read %s: %d contents, want 1", uri, len(res.Contents))
	}
	switch x := res.Contents[0].(type) {
	case mcp.BlobResourceContents:
		if x.URI != uri {
			t.Errorf("contents URI %q, want %q", x.URI, uri)
		}
		b, err := base64.StdEncoding.DecodeString(x.Blob)
		if err != nil {
			t.Fatalf("blob of %s: %v", uri, err)
		}
		return b, false
	case mcp.TextResourceContents:
		if x.URI != uri {
			t.Errorf("contents URI %q, want %q", x.URI, uri)
		}
		return []byte(x.Text), true
	}
	t.Fatalf("resources/read %s: contents %T", uri, res.Contents[0])
	return nil, false
}

// notFound checks that reading uri fails as "not found" (or invalid
// params) and returns no contents.
func notFound(t *testing.T, c *client.Client, uri string) {
	t.Helper()
	res, err := readResource(c, uri)
	if err == nil {
		t.Fatalf("resources/read %q returned %d contents, want not found", uri, len(res.Contents))
	}
	if !errors.Is(err, mcp.ErrResourceNotFound) && !errors.Is(err, mcp.ErrInvalidParams) {
		t.Fatalf("resources/read %q: %v, want resource not found", uri, err)
	}
}

// waitChanged waits until count resources/list_changed have arrived.
func waitChanged(t *testing.T, n *mcptest.Notifications, count int) {
	t.Helper()
	testtier.EventuallyState(t, 10*time.Second, fmt.Sprintf("%d resources/list_changed", count), func() (bool, string) {
		got := len(n.All(listChanged))
		return got >= count, fmt.Sprintf("%d arrived; got %s", got, n)
	})
}

// TestResourcesPerSessionHTTP: over Streamable HTTP with two tokens, a
// file a tool writes is a resource of the MCP session that wrote it only:
// listed and read (bytes equal to the file) there, never announced to
// another principal, not found from another principal or another session
// of the same principal, never reached by a traversal URI; reads are capped
// and a removed file leaves the list.
// list_changed reaches the writing session (mcp-go v1.2.1 delivers a
// notification a tool sends just before its answer only with an event
// store, mark3labs/mcp-go#969: the server configures a bounded one) and
// never another principal: B is idle when A's file is published, so a
// broadcast would wait in B's queue and arrive during B's next call.
func TestResourcesPerSessionHTTP(t *testing.T) {
	p := twoPrincipals(t, "--caps", "storage")
	h, a, b, dirA, dirB := p.h, p.a, p.b, p.dirA, p.dirB
	base := filesPage(t)
	if caps := a.Init.Capabilities.Resources; caps == nil || !caps.ListChanged || caps.Subscribe {
		t.Fatalf("initialize: resources capability %+v, want listChanged without subscribe", caps)
	}
	notesA := mcptest.Record(a.Client.Client)
	notesB := mcptest.Record(b.Client.Client)
	uri := tools.FileURIPrefix + "shot.png"

	must(t, a.Client, "browser_navigate", map[string]any{"url": base + "/"}, "Files")
	if got := listed(t, a.Client.Client); len(got) != 0 {
		t.Fatalf("resources before any file: %v", got)
	}

	t.Run("a named screenshot is a resource of its session", func(t *testing.T) {
		res := a.Call(t, "browser_take_screenshot", map[string]any{"filename": "shot.png"})
		if text := mcptest.Text(res); !strings.Contains(text, "shot.png)") {
			t.Fatalf("text lost the screenshot link:\n%s", text)
		}
		notesA.Wait(t, 10*time.Second, listChanged+" to the session that wrote the file", func(n mcp.JSONRPCNotification) bool { return n.Method == listChanged })
		link := fileLink(t, res)
		file, err := os.ReadFile(filepath.Join(dirA, "shot.png"))
		if err != nil {
			t.Fatal(err)
		}
		if link.URI != uri || link.MIMEType != "image/png" || link.Size == nil || *link.Size != int64(len(file)) {
			t.Fatalf("link %+v (size %v), want %s image/png %d bytes", link, link.Size, uri, len(file))
		}
		r, ok := listed(t, a.Client.Client)[uri]
		if !ok || r.Name != "shot.png" || r.MIMEType != "image/png" || r.Size == nil || *r.Size != int64(len(file)) {
			t.Fatalf("resources/list: %+v (present %v)", r, ok)
		}
		got, text := readBytes(t, a.Client.Client, uri)
		if text || !bytes.Equal(got, file) {
			t.Fatalf("resources/read: %d bytes (text %v), want the file's %d bytes as a blob", len(got), text, len(file))
		}
	})

	t.Run("another principal neither lists nor reads it", func(t *testing.T) {
		must(t, b.Client, "browser_navigate", map[string]any{"url": base + "/"}, "Files")
		if got := listed(t, b.Client.Client); len(got) != 0 {
			t.Fatalf("B lists A's files: %v", got)
		}
		notFound(t, b.Client.Client, uri)
		if n := len(notesB.All(listChanged)); n != 0 {
			t.Fatalf("B got %d list_changed for A's file", n)
		}
		// B's own file of the same name: the URI names the caller's file.
		fileLink(t, b.Call(t, "browser_take_screenshot", map[string]any{"filename": "shot.png", "fullPage": true}))
		fileB, err := os.ReadFile(filepath.Join(dirB, "shot.png"))
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := readBytes(t, b.Client.Client, uri); !bytes.Equal(got, fileB) {
			t.Fatal("B read other bytes than its own shot.png")
		}
	})

	t.Run("another session of the same principal does not read it", func(t *testing.T) {
		a2 := h.Connect(t, mcptest.ConnectOptions{Token: tokenA})
		if got := listed(t, a2.Client.Client); len(got) != 0 {
			t.Fatalf("a second session of A lists %v", got)
		}
		notFound(t, a2.Client.Client, uri)
	})

	t.Run("traversal URIs are not found", func(t *testing.T) {
		for _, u := range []string{
			tools.FileURIPrefix + "../" + httpguard.PrincipalName(tokenB) + "/shot.png",
			tools.FileURIPrefix + "%2e%2e/" + httpguard.PrincipalName(tokenB) + "/shot.png",
			tools.FileURIPrefix + "%2E%2E%2F" + httpguard.PrincipalName(tokenB) + "%2Fshot.png",
			tools.FileURIPrefix + "./shot.png",
			tools.FileURIPrefix + filepath.Join(dirB, "shot.png"),
			"file://" + filepath.Join(dirA, "shot.png"),
			filepath.Join(dirA, "shot.png"),
			"cloakbrowser-mcp://files/" + strings.Repeat("../", 20) + "etc/passwd",
		} {
			notFound(t, a.Client.Client, u)
		}
	})

	t.Run("a storage state reads back as text", func(t *testing.T) {
		link := fileLink(t, a.Call(t, "browser_storage_state", map[string]any{"filename": "state.json"}))
		if link.URI != tools.FileURIPrefix+"state.json" || link.MIMEType != "application/json" {
			t.Fatalf("link %+v", link)
		}
		file, err := os.ReadFile(filepath.Join(dirA, "state.json"))
		if err != nil {
			t.Fatal(err)
		}
		got, text := readBytes(t, a.Client.Client, link.URI)
		if !text || !bytes.Equal(got, file) || !bytes.Contains(got, []byte("secret-of-a")) {
			t.Fatalf("resources/read state.json: text %v, %q", text, got)
		}
		notFound(t, b.Client.Client, link.URI)
	})

	t.Run("a read over the cap names the cap and the path", func(t *testing.T) {
		link := fileLink(t, a.Call(t, "browser_take_screenshot", map[string]any{"filename": "shots/big.png"}))
		if link.URI != tools.FileURIPrefix+"shots/big.png" || link.Name != "shots/big.png" {
			t.Fatalf("link %+v", link)
		}
		// The file grows past the cap after it was published.
		big := bytes.Repeat([]byte{0x89}, tools.MaxResourceBytes+1)
		if err := os.WriteFile(filepath.Join(dirA, "shots", "big.png"), big, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := readResource(a.Client.Client, link.URI)
		if err == nil {
			t.Fatal("a read over the cap succeeded")
		}
		if msg := err.Error(); !strings.Contains(msg, "16 MiB") || !strings.Contains(msg, filepath.Join("shots", "big.png")) || len(msg) > 1000 {
			t.Fatalf("over-cap error: %q", msg)
		}
	})

	t.Run("a removed file is not found and leaves the list", func(t *testing.T) {
		big := tools.FileURIPrefix + "shots/big.png"
		if err := os.Remove(filepath.Join(dirA, "shots", "big.png")); err != nil {
			t.Fatal(err)
		}
		_, err := readResource(a.Client.Client, big)
		if err == nil || !strings.Contains(err.Error(), "no longer exists") {
			t.Fatalf("read of a removed file: %v", err)
		}
		got := listed(t, a.Client.Client)
		if _, ok := got[big]; ok {
			t.Fatal("the removed file is still listed")
		}
		if _, ok := got[uri]; !ok {
			t.Fatal("shot.png left the list too")
		}
	})
}

// TestResourcesStdio: over stdio (one client, the shared output directory)
// a named screenshot, a PDF and a download are resources, read back equal
// to their files; a screenshot without a filename (its image is inline)
// is not one.
func TestResourcesStdio(t *testing.T) {
	c, out := startInProcess(t, mcptest.Options{ProtocolVersion: mcp.ProtocolVersion20251125}, "--caps", "pdf,downloads")
	if caps := c.Init.Capabilities.Resources; caps == nil || !caps.ListChanged {
		t.Fatalf("initialize: resources capability %+v", caps)
	}
	notes := mcptest.Record(c.Client)
	base := filesPage(t)
	must(t, c, "browser_navigate", map[string]any{"url": base + "/"}, "Files")

	res := c.Call(t, "browser_take_screenshot", nil)
	noLink(t, res)
	if len(listed(t, c.Client)) != 0 {
		t.Fatal("a screenshot without a filename was published")
	}

	// check calls tool, which writes a file named name (prefix+"*"+ext
	// when generated), and reads its resource back.
	check := func(tool string, args map[string]any, name, uri, mimeType string, asText bool) {
		t.Helper()
		n := len(notes.All(listChanged))
		link := fileLink(t, c.Call(t, tool, args))
		if strings.HasSuffix(name, "*") {
			if !strings.HasPrefix(link.Name, strings.TrimSuffix(name, "*")) {
				t.Fatalf("%s: link name %q, want %s", tool, link.Name, name)
			}
			name, uri = link.Name, tools.FileURIPrefix+link.Name
		}
		if link.Name != name || link.URI != uri || link.MIMEType != mimeType {
			t.Fatalf("%s: link %+v, want %s %s %s", tool, link, name, uri, mimeType)
		}
		waitChanged(t, notes, n+1)
		if _, ok := listed(t, c.Client)[link.URI]; !ok {
			t.Fatalf("%s: %s not listed", tool, link.URI)
		}
		want, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		got, text := readBytes(t, c.Client, link.URI)
		if text != asText || !bytes.Equal(got, want) {
			t.Fatalf("%s: read %d bytes (text %v), want the file's %d (text %v)", tool, len(got), text, len(want), asText)
		}
	}
	check("browser_take_screenshot", map[string]any{"filename": "my shot.png"}, "my shot.png", tools.FileURIPrefix+"my%20shot.png", "image/png", false)
	check("browser_pdf_save", nil, "page-*", "", "application/pdf", false)
	check("browser_download", map[string]any{"url": base + "/report.csv"}, "report.csv", tools.FileURIPrefix+"report.csv", "text/csv", true)
	if n := len(listed(t, c.Client)); n != 3 {
		t.Fatalf("%d resources listed, want 3", n)
	}

	// A file removed from the disk is not found, and leaves the list with
	// a list_changed.
	n := len(notes.All(listChanged))
	if err := os.Remove(filepath.Join(out, "report.csv")); err != nil {
		t.Fatal(err)
	}
	if _, err := readResource(c.Client, tools.FileURIPrefix+"report.csv"); err == nil || !strings.Contains(err.Error(), "no longer exists") {
		t.Fatalf("read of a removed file: %v", err)
	}
	waitChanged(t, notes, n+1)
	if _, ok := listed(t, c.Client)[tools.FileURIPrefix+"report.csv"]; ok {
		t.Fatal("the removed file is still listed")
	}
}
