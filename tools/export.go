package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cloakmcp/cloakbrowser-mcp/pkg/recording"
)

// exportTools is --caps export: the session's recorded steps as a smoke
// scenario or a Playwright test (record.go records them).
func exportTools() []*Tool {
	var formats []string
	for _, f := range recording.Formats() {
		formats = append(formats, string(f))
	}
	return []*Tool{{
		Def: optDef("browser_export_test", "Export the session as a test",
			"Write the actions of this session (navigations, clicks, typing, …) as a replayable test that checks what each step showed: a cloakbrowser-mcp smoke scenario (YAML) or a Playwright test (TypeScript, Python, Java, C#). Targets are written as role and name or Playwright selectors, never refs; typed secrets as ${NAME}. Returns the file as a resource.",
			false, props{
				"format":   pEnum("What to write: smoke (a `cloakbrowser-mcp smoke` scenario, the default), typescript (@playwright/test), python (pytest-playwright), java (JUnit 5) or csharp (NUnit)", formats...),
				"filename": pStr("File name, relative to the output directory. Defaults to one derived from name and format."),
				"name":     pStr("Name of the scenario or test. Defaults to \"session\"."),
				"from":     pNum("First step to export (step numbers start at 1, in the order of the calls). Defaults to the first."),
				"to":       pNum("Last step to export. Defaults to the last."),
				"steps": map[string]any{"type": "array", "items": map[string]any{"type": "number"},
					"description": "Only these steps (their numbers); defaults to every step from..to"},
				"assertions": map[string]any{"type": "array", "description": "Checks to add after a step: {step, role, name} (an element), {step, text} (visible text), {step, url} or {step, title}",
					"items": map[string]any{"type": "object", "additionalProperties": false, "required": []string{"step"}, "properties": map[string]any{
						"step": pNum("The step the check follows"), "role": pStr("ARIA role of an element that must be visible"),
						"name": pStr("Its accessible name (or text)"), "text": pStr("Text that must be visible"),
						"url": pStr("The URL the page must have"), "title": pStr("The title the page must have"),
					}}},
				"base": pStr("Origin written as ${BASE} (BASE in code) so the test can run elsewhere. Defaults to the origin of the first page."),
			}),
		Cap: "export", Handle: exportTest,
	}}
}

// maxInlineExport bounds the part of an exported file the answer shows.
const maxInlineExport = 6000

func exportTest(ctx context.Context, env *Env, args Args) *Response {
	resp := &Response{}
	if env.Recorder == nil {
		return resp.Error("this server records no steps: start it with --caps export")
	}
	id, sess := sessionID(ctx, env)
	format, err := recording.ParseFormat(args.String("format", "smoke"))
	if err != nil {
		return resp.Error("%v", err)
	}
	o := recording.Options{
		Format: format, Name: args.String("name", ""), Base: args.String("base", ""),
		From: int(args.Number("from", 0)), To: int(args.Number("to", 0)),
		Source: "browser_export_test", Secrets: env.Output.Secrets.Names(),
	}
	steps, _ := args.Raw("steps").([]any)
	for _, n := range steps {
		if f, ok := n.(float64); ok {
			o.Keep = append(o.Keep, int(f))
		}
	}
	for _, a := range args.Objects("assertions") {
		s := func(k string) string { v, _ := a[k].(string); return v }
		step, _ := a["step"].(float64)
		o.Assertions = append(o.Assertions, recording.Assertion{Step: int(step), Role: s("role"), Name: s("name"), Text: s("text"), URL: s("url"), Title: s("title")})
	}
	data, err := recording.Export(env.Recorder.Steps(id), o)
	if err != nil {
		var ue *recording.UnstableError
		if errors.As(err, &ue) || errors.Is(err, recording.ErrEmpty) {
			return resp.Error("%v", err)
		}
		return resp.Error("browser_export_test: %v", err)
	}
	// The file goes through the secrets' redaction too: a value that
	// reached a recorded string some other way is never written.
	text := env.Output.Secrets.Redact(string(data))
	a, err := env.filesOf(sess)
	if err != nil {
		return resp.Error("%v", err)
	}
	defer a.Close()
	name := args.String("filename", "")
	if name == "" {
		name = recording.DefaultFileName(cmpOr(o.Name, "session"), format)
	}
	p, err := a.Write(name, "", "", []byte(text))
	if err != nil {
		return resp.Error("%v", err)
	}
	kind := map[recording.Format]string{recording.Smoke: "Smoke scenario", recording.TypeScript: "Playwright test (TypeScript)",
		recording.Python: "Playwright test (Python)", recording.Java: "Playwright test (Java)", recording.CSharp: "Playwright test (C#)"}[format]
	resp.Result("- [%s](%s) (%d bytes)", kind, env.link(p), len(text))
	switch format {
	case recording.Smoke:
		resp.Result("- Replay: cloakbrowser-mcp smoke %s", env.link(p))
	case recording.TypeScript:
		resp.Result("- Run: npx playwright test %s", env.link(p))
	}
	shown := text
	if len(shown) > maxInlineExport {
		shown = shown[:maxInlineExport] + fmt.Sprintf("\n… (%d bytes more in the file)", len(text)-maxInlineExport)
	}
	fence := map[recording.Format]string{recording.Smoke: "yaml", recording.TypeScript: "ts", recording.Python: "python", recording.Java: "java", recording.CSharp: "csharp"}[format]
	resp.ResultText("```" + fence + "\n" + strings.TrimRight(shown, "\n") + "\n```")
	env.publishFile(ctx, sess, resp, p, kind)
	return resp
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
