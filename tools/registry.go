package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sort"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/rs/zerolog"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/memtrim"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/cloakbrowser"
	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

// SessionFunc finds the browser session of the MCP session a call belongs to.
type SessionFunc func(ctx context.Context) (*session.Session, error)

// Env is what the tools need from the server.
type Env struct {
	// ConsoleLevel is the level browser_console_messages uses when the
	// agent gives none (--console-level). If empty, info.
	ConsoleLevel string
	// Session finds the caller's session.
	Session SessionFunc
	// Binary returns the resolved browser binary (waiting for its resolution),
	// reported by cloakbrowser_binary_info.
	Binary func(ctx context.Context) cloakbrowser.BinaryInfo
	// Version is this server's version.
	Version string
	// Caps are the enabled opt-in capability groups (upstream names).
	Caps map[string]bool
	// OutputDir is where files (screenshots, downloads, traces) are written.
	OutputDir string
	// OutputMaxSize, if positive, caps the bytes of OutputDir: after a tool
	// writes a file there, the oldest other files are removed until the
	// total fits (--output-max-size). If zero, nothing is removed.
	OutputMaxSize int64
	// FilePaths is how responses show file paths (--file-paths):
	// "absolute", or relative to the working directory when empty or
	// "relative".
	FilePaths string
	// SessionLog, if set, receives every tool call and its response
	// (--save-session; sessionlog.go).
	SessionLog *SessionLog
	// Recorder, if set, records every action tool call as a step
	// (record.go) for browser_export_test and the steps log.
	Recorder *Recorder
	// AllowUnrestrictedFileAccess permits file: URLs and paths outside the
	// allowed roots.
	AllowUnrestrictedFileAccess bool
	// BridgeInfo adds live fields (the CDP state) to cloakbrowser_bridge_info.
	BridgeInfo func(ctx context.Context) map[string]any
	// Log receives per-call logs.
	Log zerolog.Logger
	// Lifetime, if set, ends every tool call in flight when it is done (the
	// client went away, the server stops): their browser work is abandoned
	// through the session's door instead of holding the shutdown.
	Lifetime context.Context
	// CallTimeout bounds one tool call, a backstop beyond each step's own
	// bound. If zero, 3 minutes.
	CallTimeout time.Duration
	// Output is the code language, the secrets and the image policy every
	// answer goes through (tools/codegen.go); the zero value is upstream's
	// default: TypeScript code, no secrets, images allowed.
	Output Output
	// Config, if set, is the resolved configuration browser_get_config
	// shows (credentials already redacted).
	Config func() any
	// Progress sends a call's notifications/progress (progress.go) when its
	// request carries a progressToken. If nil, mcp-go's notification to the
	// caller's session.
	Progress ProgressSender
	// SnapshotMode is what navigation and action responses carry (the
	// --snapshot-mode flag): "outline" (the default when empty), "inline",
	// "full" or "none"; see tools/diff.go.
	SnapshotMode string
	// FFmpeg reports whether video can be recorded (the devtools video
	// tools): nil when an ffmpeg is linked for the driver, else an error
	// wrapping driver.ErrNoFFmpeg. If nil, the video tools answer that
	// ffmpeg is needed.
	FFmpeg func() error
	// Publish, if set, makes the files tools write resources of the
	// caller's MCP session (resources.go); if nil, no file is published and
	// answers carry no resource_link.
	Publish PublishFunc

	// listed are the tools Register added, in order.
	listed []*Tool
}

// Tool is one MCP tool: its definition, its capability group and its handler.
type Tool struct {
	Def mcp.Tool
	// Cap is the capability group; "core" tools are always on.
	Cap string
	// Aliases maps extra accepted argument names to schema properties.
	Aliases map[string]string
	// Handle runs the call; args are already validated against Def's schema.
	Handle func(ctx context.Context, env *Env, args Args) *Response

	schema *schema
}

var refAlias = map[string]string{"ref": "target"}

// All returns every tool this server implements, in name order.
func All() []*Tool {
	var all []*Tool
	for _, fam := range families() {
		all = append(all, fam()...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Def.Name < all[j].Def.Name })
	return all
}

// families lists the constructors of each tool family file.
func families() []func() []*Tool {
	return []func() []*Tool{
		navigateTools,
		snapshotTools,
		interactTools,
		modalTools,
		evaluateTools,
		waitTools,
		findTools,
		screenshotTools,
		activityTools,
		emulateTools,
		tabsTools,
		infoTools,
		// Opt-in families (--caps).
		storageTools,
		downloadsTools,
		devtoolsTools,
		videoTools,
		actionsTools,
		stateTools,
		networkTools,
		visionTools,
		labelsTools,
		pdfTools,
		testingTools,
		configTools,
		exportTools,
	}
}

// Enabled returns the tools enabled by caps.
func Enabled(caps map[string]bool) []*Tool {
	var out []*Tool
	for _, t := range All() {
		if t.Cap == "core" || t.Cap == "local" || caps[t.Cap] {
			out = append(out, t)
		}
	}
	return out
}

// Register adds the enabled tools to an MCP server.
func Register(s *server.MCPServer, env *Env) error {
	for _, t := range Enabled(env.Caps) {
		raw := t.Def.RawInputSchema
		if len(raw) == 0 {
			b, err := json.Marshal(t.Def.InputSchema)
			if err != nil {
				return err
			}
			raw = b
		}
		sc, err := parseSchema(raw)
		if err != nil {
			return fmt.Errorf("tool %s schema: %w", t.Def.Name, err)
		}
		t.schema = sc
		s.AddTool(t.Def, env.handler(t))
		env.listed = append(env.listed, t)
	}
	return nil
}

func (env *Env) handler(t *Tool) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
		start := time.Now()
		defer func() {
			if p := recover(); p != nil {
				env.Log.Error().Str("tool", t.Def.Name).Interface("panic", p).Bytes("stack", debug.Stack()).Msg("tool panicked")
				res = env.build((&Response{}).Error("internal error in %s: %v", t.Def.Name, p))
				err = nil
			}
		}()
		args, aerr := decodeArgs(req)
		if aerr == nil && t.schema != nil {
			// A page's WebMCP tool has none: the page checks its input.
			aerr = validateArgs(t.schema, args, t.Aliases)
		}
		if aerr != nil {
			env.Log.Debug().Str("tool", t.Def.Name).Err(aerr).Msg("bad arguments")
			return env.build((&Response{}).Error("%s: %v", t.Def.Name, aerr)), nil
		}
		timeout := env.CallTimeout
		if timeout <= 0 {
			timeout = 3 * time.Minute
		}
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		if env.Lifetime != nil {
			stop := context.AfterFunc(env.Lifetime, cancel)
			defer stop()
		}
		a := Args{m: args, aliases: t.Aliases}
		var r *Response
		if end, err := env.admit(ctx, t); err != nil {
			r = (&Response{}).Error("%v", err)
		} else {
			defer end()
			stopProgress := env.startProgress(ctx, t.Def.Name, req, a)
			r = t.Handle(ctx, env, a)
			stopProgress()
		}
		env.Log.Debug().Str("tool", t.Def.Name).Int64("ms", time.Since(start).Milliseconds()).Bool("error", r.Failed()).Msg("tool call")
		res = env.build(r)
		env.SessionLog.record(ctx, env, t.Def.Name, args, res)
		// A big snapshot leaves its parse behind as garbage the runtime
		// would keep: give it back once the answer is out.
		memtrim.Note()
		return res, nil
	}
}

// admit counts a call against its session's cap on calls in flight
// (session.BeginCall); local tools, which never touch the browser, are not
// counted. A call whose session cannot be found is admitted: the tool says
// why.
func (env *Env) admit(ctx context.Context, t *Tool) (end func(), err error) {
	if t.Cap == "local" || env.Session == nil {
		return func() {}, nil
	}
	sess, err := env.Session(ctx)
	if err != nil || sess == nil {
		return func() {}, nil
	}
	return sess.BeginCall()
}

func decodeArgs(req mcp.CallToolRequest) (map[string]any, error) {
	switch a := req.Params.Arguments.(type) {
	case nil:
		return map[string]any{}, nil
	case map[string]any:
		return a, nil
	case json.RawMessage:
		var m map[string]any
		if len(a) == 0 || string(a) == "null" {
			return map[string]any{}, nil
		}
		if err := json.Unmarshal(a, &m); err != nil {
			return nil, errors.New("arguments must be a JSON object")
		}
		return m, nil
	default:
		b, err := json.Marshal(a)
		if err != nil {
			return nil, errors.New("arguments must be a JSON object")
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil || m == nil {
			return nil, errors.New("arguments must be a JSON object")
		}
		return m, nil
	}
}
