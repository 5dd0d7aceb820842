package tools

import (
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cloakmcp/cloakbrowser-mcp/codegen"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/clip"
)

// Response collects the sections of a tool's answer, rendered in upstream's
// order: Error, Result, Open tabs, Page, Modal state, Snapshot, Events.
type Response struct {
	err      []string
	result   []string
	tabs     []string
	page     []string
	modal    []string
	snapshot string
	events   []string
	images   []mcp.Content
	// links are resource_link items for the files the call wrote, after
	// the text and images (resources.go).
	links []mcp.Content
	// structured is sent as structuredContent when set (info tools).
	structured any
	// raw, when set, replaces the markdown body (info tools answer JSON).
	raw *string
	// code is the Playwright code the call ran; Env.build renders it into
	// codeLines in the --codegen language, fenced as codeFence.
	code      codegen.Code
	codeLines []string
	codeFence string
}

// Code is the Playwright code the call ran ("### Ran Playwright code").
func (r *Response) Code() *codegen.Code { return &r.code }

// Error adds an error line and marks the response as failed.
func (r *Response) Error(format string, args ...any) *Response {
	// clip.Words: no error brings back a megabyte argument, whoever
	// (Playwright, the OS, a page) quoted it whole.
	r.err = append(r.err, clip.Words(fmt.Sprintf(format, args...)))
	return r
}

// ErrorText is the error lines added, one a line.
func (r *Response) ErrorText() string { return strings.Join(r.err, "\n") }

// Failed reports whether an error was added.
func (r *Response) Failed() bool { return len(r.err) > 0 }

// Result adds a line to the Result section.
func (r *Response) Result(format string, args ...any) {
	r.result = append(r.result, fmt.Sprintf(format, args...))
}

// ResultText adds preformatted text to the Result section.
func (r *Response) ResultText(s string) { r.result = append(r.result, s) }

// SetTabs sets the Open tabs section (one line per tab).
func (r *Response) SetTabs(lines []string) { r.tabs = lines }

// SetPage sets the Page section lines.
func (r *Response) SetPage(lines []string) { r.page = lines }

// AddModal adds a Modal state line.
func (r *Response) AddModal(line string) { r.modal = append(r.modal, line) }

// SetSnapshot sets the Snapshot section body (already fenced if needed).
func (r *Response) SetSnapshot(s string) { r.snapshot = s }

// AddEvent adds an Events line.
func (r *Response) AddEvent(line string) { r.events = append(r.events, line) }

// AddImage appends image content after the text part.
func (r *Response) AddImage(data, mime string) {
	r.images = append(r.images, mcp.NewImageContent(data, mime))
}

// AddLink appends a resource_link to a file the call wrote; it follows the
// text (kept first and unchanged for drop-in clients) and the images.
func (r *Response) AddLink(l mcp.ResourceLink) { r.links = append(r.links, l) }

// Build renders the MCP result.
func (r *Response) Build() *mcp.CallToolResult {
	var text string
	if r.raw != nil && len(r.err) == 0 {
		text = *r.raw
	} else {
		text = r.markdown()
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(text)}, IsError: len(r.err) > 0}
	res.Content = append(res.Content, r.images...)
	res.Content = append(res.Content, r.links...)
	if r.structured != nil && len(r.err) == 0 {
		res.StructuredContent = r.structured
	}
	return res
}

func (r *Response) markdown() string {
	var b strings.Builder
	section := func(title string, lines []string) {
		if len(lines) == 0 {
			return
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("### ")
		b.WriteString(title)
		b.WriteByte('\n')
		for _, l := range lines {
			b.WriteString(l)
			if !strings.HasSuffix(l, "\n") {
				b.WriteByte('\n')
			}
		}
	}
	section("Error", r.err)
	section("Result", r.result)
	if len(r.codeLines) > 0 {
		section("Ran Playwright code", []string{fence(r.codeFence, strings.Join(r.codeLines, "\n"))})
	}
	section("Open tabs", r.tabs)
	section("Page", r.page)
	section("Modal state", r.modal)
	if r.snapshot != "" {
		section("Snapshot", []string{r.snapshot})
	}
	section("Events", r.events)
	return strings.TrimRight(b.String(), "\n")
}

// fence wraps text in a fenced code block of the given language.
func fence(lang, text string) string {
	return "```" + lang + "\n" + strings.TrimRight(text, "\n") + "\n```"
}
