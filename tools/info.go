package tools

import (
	"context"
	"encoding/json"
	"path/filepath"

	"github.com/mark3labs/mcp-go/mcp"
)

// Names of this server's own tools.
const (
	BinaryInfoTool = "cloakbrowser_binary_info"
	BridgeInfoTool = "cloakbrowser_bridge_info"
)

// UpstreamVersion is the @playwright/mcp release whose tool names and schemas
// this server reproduces.
const UpstreamVersion = "0.0.83"

func infoTools() []*Tool {
	ro := func(title string) mcp.ToolAnnotation {
		return mcp.ToolAnnotation{Title: title, ReadOnlyHint: mcp.ToBoolPtr(true), IdempotentHint: mcp.ToBoolPtr(true), OpenWorldHint: mcp.ToBoolPtr(false), DestructiveHint: mcp.ToBoolPtr(false)}
	}
	empty := json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)
	return []*Tool{
		{Def: mcp.Tool{Name: BinaryInfoTool, Description: "Report which browser binary this server resolved and launches (CloakBrowser or a system Chromium fallback), where it came from, and why.", RawInputSchema: empty, Annotations: ro("CloakBrowser binary info")},
			Cap: "local", Handle: binaryInfo},
		{Def: mcp.Tool{Name: BridgeInfoTool, Description: "Report this server's name, version, runtime, browser engine, tool counts and CDP proxy state.", RawInputSchema: empty, Annotations: ro("CloakBrowser bridge info")},
			Cap: "local", Handle: bridgeInfo},
	}
}

func jsonResponse(v any) *Response {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return (&Response{}).Error("encode: %v", err)
	}
	s := string(b)
	return &Response{raw: &s, structured: v}
}

func engineName(e string) string {
	if e == "" {
		return "chromium"
	}
	return e
}

func binaryInfo(ctx context.Context, env *Env, _ Args) *Response {
	out, _ := filepath.Abs(env.OutputDir)
	bin := env.Binary(ctx)
	if env.Session != nil && bin.BinaryPath != "" {
		if s, err := env.Session(ctx); err == nil && s != nil {
			r := s.Config().Stealth(bin)
			bin.StealthProtections = &r
		}
	}
	var exe any
	if bin.BinaryPath != "" {
		exe = bin.BinaryPath
	}
	return jsonResponse(map[string]any{
		"browserEngine":  engineName(bin.Engine),
		"executablePath": exe,
		"outputDir":      out,
		"binary":         bin,
	})
}

func bridgeInfo(ctx context.Context, env *Env, _ Args) *Response {
	upstreamCount, local := 0, []string{}
	for _, t := range env.listed {
		if t.Cap == "local" {
			local = append(local, t.Def.Name)
		} else if _, ok := upstream[t.Def.Name]; ok {
			upstreamCount++
		}
	}
	v := map[string]any{
		"name":          "io.github.cloakmcp/cloakbrowser-mcp",
		"title":         "CloakBrowser MCP",
		"version":       env.Version,
		"runtime":       "native-go",
		"browserEngine": engineName(env.Binary(ctx).Engine),
		"upstream":      map[string]any{"package": "@playwright/mcp", "version": UpstreamVersion, "toolCount": upstreamCount},
		"localTools":    map[string]any{"toolCount": len(local), "names": local},
		"cdp":           map[string]any{"enabled": false},
	}
	if env.BridgeInfo != nil {
		for k, x := range env.BridgeInfo(ctx) {
			v[k] = x
		}
	}
	return jsonResponse(v)
}
