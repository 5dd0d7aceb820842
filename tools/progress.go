package tools

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Progress timing: a call that carries a progressToken hears nothing for its
// first progressAfter (most calls end before), then a notifications/progress
// every progressEvery until it answers.
const (
	progressAfter = time.Second
	progressEvery = time.Second
)

// ProgressSender sends one notifications/progress to the caller's MCP
// session (the params are the spec's: progressToken, progress, total,
// message).
type ProgressSender func(ctx context.Context, params map[string]any) error

// sendProgress is the default ProgressSender: mcp-go's notification to the
// session in ctx.
func sendProgress(ctx context.Context, params map[string]any) error {
	s := server.ServerFromContext(ctx)
	if s == nil {
		return fmt.Errorf("no MCP server in context")
	}
	return s.SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress), params)
}

// startProgress starts the progress ticker of one call if its request
// carries a progressToken; stop ends it and waits for it. Without a token
// nothing is started and nothing is ever sent.
func (env *Env) startProgress(ctx context.Context, name string, req mcp.CallToolRequest, args Args) (stop func()) {
	if req.Params.Meta == nil || req.Params.Meta.ProgressToken == nil {
		return func() {}
	}
	token := req.Params.Meta.ProgressToken
	send := env.Progress
	if send == nil {
		send = sendProgress
	}
	detail, total := progressDetail(name, args)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		start := time.Now()
		t := time.NewTimer(progressAfter)
		defer t.Stop()
		for n := 1; ; n++ {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			elapsed := time.Since(start).Round(time.Second)
			msg := fmt.Sprintf("%s: %v elapsed", name, elapsed)
			if d := detail; d != "" {
				msg += ", " + d
			} else if env.launching(ctx) {
				msg += ", starting the browser"
			}
			params := map[string]any{"progressToken": token, "progress": n, "message": msg}
			if total > 0 {
				params["total"] = max(total, n)
			}
			if err := send(ctx, params); err != nil {
				env.Log.Debug().Err(err).Str("tool", name).Msg("progress notification not sent")
			}
			t.Reset(progressEvery)
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// launching reports whether the caller's session has no browser yet (the
// call is waiting for its launch).
func (env *Env) launching(ctx context.Context) bool {
	if env.Session == nil {
		return false
	}
	sess, err := env.Session(ctx)
	return err == nil && sess.Current() == nil
}

// progressDetail is what a long tool is waiting for, from its arguments, and
// the expected number of progress ticks when it is known (a timed wait).
func progressDetail(name string, args Args) (string, int) {
	switch name {
	case "browser_navigate":
		return "loading " + quoteCut(args.String("url", "")), 0
	case "browser_navigate_back":
		return "going back", 0
	case "browser_wait_for":
		switch {
		case args.String("text", "") != "":
			return "waiting for text " + quoteCut(args.String("text", "")), 0
		case args.String("textGone", "") != "":
			return "waiting for text " + quoteCut(args.String("textGone", "")) + " to disappear", 0
		default:
			secs := args.Number("time", 0)
			return fmt.Sprintf("waiting %v s", secs), int(secs)
		}
	case "browser_wait_for_download", "browser_download":
		return "waiting for the download", 0
	case "browser_stop_tracing":
		return "saving the trace", 0
	case "browser_pdf_save":
		return "printing the page to PDF", 0
	}
	return "", 0
}

// quoteCut quotes s, cut to 60 characters.
func quoteCut(s string) string {
	r := []rune(s)
	if len(r) > 60 {
		s = string(r[:60]) + "…"
	}
	return fmt.Sprintf("%q", s)
}
