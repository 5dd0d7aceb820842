package tools

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/clip"
	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
)

func activityTools() []*Tool {
	quiet := tabOpts{noPage: true}
	return []*Tool{
		{Def: upstreamDef("browser_console_messages"), Cap: "core", Handle: tabTool("browser_console_messages", quiet, consoleMessages)},
		{Def: upstreamDef("browser_network_requests"), Cap: "core", Handle: tabTool("browser_network_requests", quiet, networkRequests)},
		{Def: upstreamDef("browser_network_request"), Cap: "core", Handle: tabTool("browser_network_request", quiet, networkRequest)},
	}
}

// severity orders console levels; a level includes the more severe ones.
func severity(typ string) int {
	switch typ {
	case "error", "pageerror", "assert":
		return 0
	case "warning":
		return 1
	case "debug", "trace":
		return 3
	default:
		return 2 // log, info, dir, table, …
	}
}

func consoleMessages(c *tabCall) error {
	def := c.env.ConsoleLevel
	if def == "" {
		def = "info"
	}
	level := map[string]int{"error": 0, "warning": 1, "info": 2, "debug": 3}[c.args.String("level", def)]
	entries := c.tab.Console(!c.args.Bool("all", false))
	var b strings.Builder
	n := 0
	for _, e := range entries {
		if severity(e.Type) > level {
			continue
		}
		n++
		typ := e.Type
		if typ == "pageerror" {
			typ = "error"
		}
		// Upstream's form: two messages with one text (two missing
		// files) are told apart by where they come from.
		if e.Where != "" {
			fmt.Fprintf(&b, "- [%s] %s @ %s\n", strings.ToUpper(typ), e.Text, e.Where)
		} else {
			fmt.Fprintf(&b, "- [%s] %s\n", strings.ToUpper(typ), e.Text)
		}
	}
	if n == 0 {
		c.resp.Result("No console messages")
		return nil
	}
	return c.output("console", ".log", b.String())
}

// output puts text in the Result section, or in a file when the agent asked.
func (c *tabCall) output(prefix, ext, text string) error {
	if name := c.args.String("filename", ""); name != "" {
		p, err := c.writeOutput(name, prefix, ext, []byte(text))
		if err != nil {
			return err
		}
		c.resp.Result("- [%s](%s)", prefix, c.env.link(p))
		return nil
	}
	c.resp.ResultText(text)
	return nil
}

var staticTypes = map[string]bool{"image": true, "font": true, "stylesheet": true, "script": true, "media": true, "manifest": true, "texttrack": true}

func requestLine(i int, r page.RequestEntry) string {
	status := "pending"
	switch {
	case r.Failure != "":
		status = "FAILED " + r.Failure
	case r.Status > 0:
		status = fmt.Sprintf("%d %s", r.Status, http.StatusText(r.Status))
	}
	return fmt.Sprintf("%d. [%s] %s => [%s]", i, r.Method, r.URL, status)
}

func networkRequests(c *tabCall) error {
	var re *regexp.Regexp
	if f := c.args.String("filter", ""); f != "" {
		var err error
		if re, err = regexp.Compile(f); err != nil {
			return fmt.Errorf("invalid filter regexp %s: %v", clip.Quote(f), regexpCause(err))
		}
	}
	static := c.args.Bool("static", false)
	var b strings.Builder
	n := 0
	for i, r := range c.tab.Requests() {
		ok := r.Failure == "" && (r.Status == 0 || r.Status < 400)
		if !static && staticTypes[r.Resource] && ok {
			continue
		}
		if re != nil && !re.MatchString(r.URL) {
			continue
		}
		n++
		b.WriteString(requestLine(i+1, r))
		b.WriteByte('\n')
	}
	if n == 0 {
		c.resp.Result("No network requests")
		return nil
	}
	return c.output("network", ".log", b.String())
}

// maxBodyChars bounds a body printed inline.
const maxBodyChars = 64 << 10

func headerLines(h map[string]string) string {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s\n", k, h[k])
	}
	return b.String()
}

func bodyText(b []byte) string {
	if !utf8.Valid(b) {
		return fmt.Sprintf("(%d bytes of binary data)", len(b))
	}
	s := string(b)
	if json.Valid(b) {
		var v any
		if json.Unmarshal(b, &v) == nil {
			if pretty, err := json.MarshalIndent(v, "", "  "); err == nil {
				s = string(pretty)
			}
		}
	}
	if len(s) > maxBodyChars {
		s = s[:maxBodyChars] + fmt.Sprintf("\n… (%d bytes in all; save it with filename)", len(b))
	}
	return s
}

func networkRequest(c *tabCall) error {
	idx := int(c.args.Number("index", 0))
	reqs := c.tab.Requests()
	if idx < 1 || idx > len(reqs) {
		return fmt.Errorf("request %d not found: there are %d requests; list them with browser_network_requests", idx, len(reqs))
	}
	r := reqs[idx-1]
	part := c.args.String("part", "")
	var b strings.Builder
	add := func(title, body string) {
		if part == "" {
			fmt.Fprintf(&b, "## %s\n", title)
		}
		b.WriteString(body)
		if !strings.HasSuffix(body, "\n") {
			b.WriteByte('\n')
		}
	}
	if part == "" {
		b.WriteString(requestLine(idx, r) + "\n")
	}
	if part == "" || part == "request-headers" {
		h, err := r.Request.AllHeaders()
		if err != nil {
			h = r.Request.Headers()
		}
		add("Request headers", headerLines(h))
	}
	if part == "" || part == "request-body" {
		body, _ := r.Request.PostData()
		if body == "" {
			body = "(no body)"
		}
		add("Request body", bodyText([]byte(body)))
	}
	if part == "" || part == "response-headers" || part == "response-body" {
		resp, err := r.Request.Response()
		if err != nil || resp == nil {
			add("Response", "(no response)")
		} else {
			if part == "" || part == "response-headers" {
				h, err := resp.AllHeaders()
				if err != nil {
					h = resp.Headers()
				}
				add("Response headers", headerLines(h))
			}
			if part == "" || part == "response-body" {
				body, err := resp.Body()
				if err != nil {
					add("Response body", "(body unavailable: "+clip.FirstLine(err.Error())+")")
				} else {
					add("Response body", bodyText(body))
				}
			}
		}
	}
	return c.output("request", ".txt", b.String())
}
