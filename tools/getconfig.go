package tools

import (
	"context"
	"encoding/json"
	"strings"
)

// configTools is upstream's --caps=config: the resolved configuration.
func configTools() []*Tool {
	return []*Tool{{
		Def: upstreamDef("browser_get_config"),
		Cap: "config", Handle: getConfig,
	}}
}

func getConfig(_ context.Context, env *Env, _ Args) *Response {
	r := &Response{}
	if env.Config == nil {
		return r.Error("this server was built without a configuration to show")
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(env.Config()); err != nil {
		return r.Error("render the configuration: %v", err)
	}
	r.ResultText(strings.TrimRight(b.String(), "\n"))
	return r
}
