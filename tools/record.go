package tools

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/pkg/recording"
	"github.com/cloakmcp/cloakbrowser-mcp/session"
	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
	"github.com/cloakmcp/cloakbrowser-mcp/snapshot"
)

// Recorder keeps the steps of every MCP session's action tool calls
// (pkg/recording) for browser_export_test (--caps export) and, with
// --save-session, appends each to a steps log beside the session log
// (session-….steps.jsonl, through the caller's os.Root), which
// `cloakbrowser-mcp smoke record` reads.
type Recorder struct {
	// Log appends every step to the session's steps log.
	Log bool

	mu       sync.Mutex
	sessions map[string]*recorded
	order    []string // session ids, oldest first
}

type recorded struct {
	steps []recording.Step
	file  string // the steps log's name in the caller's directory
}

// Bounds of what a Recorder keeps: steps per session, and sessions (the
// oldest session's steps go first).
const (
	maxRecordedSteps    = 2000
	maxRecordedSessions = 256
)

// NewRecorder returns a Recorder; log turns on the steps log.
func NewRecorder(log bool) *Recorder {
	return &Recorder{Log: log, sessions: map[string]*recorded{}}
}

// Steps returns a copy of the steps recorded for a session.
func (r *Recorder) Steps(id string) []recording.Step {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s := r.sessions[id]; s != nil {
		return append([]recording.Step(nil), s.steps...)
	}
	return nil
}

// add numbers and keeps a step; it returns the numbered step, its log's
// name, and false when the session is at maxRecordedSteps.
func (r *Recorder) add(id string, st recording.Step) (recording.Step, string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.sessions[id]
	if s == nil {
		s = &recorded{file: fmt.Sprintf("session-%s-%s.steps.jsonl", time.Now().UTC().Format("2006-01-02T15-04-05.000Z"), safeName(id))}
		r.sessions[id] = s
		r.order = append(r.order, id)
		if len(r.order) > maxRecordedSessions {
			delete(r.sessions, r.order[0])
			r.order = r.order[1:]
		}
	}
	if len(s.steps) >= maxRecordedSteps {
		return st, "", false
	}
	st.N = len(s.steps) + 1
	s.steps = append(s.steps, st)
	return st, s.file, true
}

// stepRec is what a call of a recorded tool gathers while it runs.
type stepRec struct {
	beforeURL, beforeTitle string
	targets                []*recording.Target
	selectors              map[*page.Element]string
}

// startRecording begins a step for a call of a recorded tool.
func (c *tabCall) startRecording(tool string) {
	if c.env.Recorder == nil || !recording.Recorded(tool) {
		return
	}
	c.rec = &stepRec{beforeURL: c.tab.URL(), selectors: map[*page.Element]string{}}
	c.rec.beforeTitle, _ = c.tab.Title(c.ctx)
}

// recordTarget describes a located element as a replay finds it again:
// its role and name in the snapshot the agent acted on, and Playwright's
// selector of it, read now (the action may take it away).
func (c *tabCall) recordTarget(target string, el *page.Element) {
	if c.rec == nil {
		return
	}
	t := &recording.Target{Given: target}
	if snapshot.ClassifyRef(target) == snapshot.RefNone {
		t.Selector = target // the agent's own selector is stable already
	} else {
		if snap := c.tab.LastSnapshot(); snap != nil && snapshot.ClassifyRef(target) == snapshot.RefAI {
			if tree, err := snap.Tree(); err == nil {
				if found := recording.TargetIn(tree, target); found != nil {
					t = found
				}
			}
		}
		if sel, err := el.Selector(c.ctx); err == nil {
			t.Selector = sel
			c.rec.selectors[el] = sel
		}
	}
	c.redactTarget(t)
	c.rec.targets = append(c.rec.targets, t)
}

// recordedSelector is the selector recordTarget read for el, if any.
func (c *tabCall) recordedSelector(el *page.Element) (string, bool) {
	if c.rec == nil {
		return "", false
	}
	s, ok := c.rec.selectors[el]
	return s, ok
}

// finishRecording reads the page after the step and keeps the step.
func (c *tabCall) finishRecording(tool string) {
	if c.rec == nil {
		return
	}
	st := recording.Step{Tool: tool, Args: c.recordArgs(tool)}
	if c.resp.Failed() {
		st.Error = c.secretVars(c.resp.ErrorText())
	}
	ts := c.rec.targets
	switch tool {
	case "browser_fill_form":
		st.Fields = ts
	case "browser_drag":
		if len(ts) == 2 {
			st.Target, st.EndTarget = ts[0], ts[1]
		}
	default:
		if len(ts) > 0 {
			st.Target = ts[0]
		}
	}
	if st.Error == "" {
		st.After = c.pageState(tool)
	}
	id := "session"
	if c.sess != nil {
		id = c.sess.ID()
	}
	st, file, ok := c.env.Recorder.add(id, st)
	if !ok {
		c.env.Log.Warn().Str("session", id).Msg("recorder: the session has reached its step limit; later steps are not recorded")
		return
	}
	if c.env.Recorder.Log {
		c.appendStepsLog(file, st)
	}
}

// pageState is the page after a step, read by the recorder itself: URL,
// title, and the elements that appeared, compared on the tab's own
// snapshots (a fresh one when the action's answer took none).
func (c *tabCall) pageState(tool string) recording.State {
	tab := c.tab
	s := recording.State{URL: c.secretVars(tab.URL())}
	title, _ := tab.Title(c.ctx)
	s.Title = c.secretVars(title)
	s.URLChanged = tab.URL() != c.rec.beforeURL
	s.TitleChanged = title != c.rec.beforeTitle
	if len(tab.Modals()) > 0 {
		return s // a blocked page has no snapshot
	}
	after := tab.LastSnapshot()
	if after == nil || after == c.before {
		if snap, err := tab.AISnapshot(c.ctx, page.SnapshotOptions{}); err == nil {
			after = snap
		}
	}
	var before []recording.Element
	if c.before != nil && tool != "browser_navigate" && tool != "browser_navigate_back" {
		if t, err := c.before.Tree(); err == nil {
			before = recording.Elements(t)
		}
	}
	if after != nil {
		if t, err := after.Tree(); err == nil {
			s.Appeared = recording.Appeared(before, recording.Elements(t))
		}
	}
	for i := range s.Appeared {
		s.Appeared[i].Label = c.secretVars(s.Appeared[i].Label)
	}
	return s
}

// recordArgs are the call's arguments without its targets and element
// descriptions, a typed secret's name as ${NAME}, and every secret value
// as ${NAME}.
func (c *tabCall) recordArgs(tool string) map[string]any {
	drop := map[string]bool{"target": true, "ref": true, "element": true, "startTarget": true, "startRef": true,
		"endTarget": true, "endRef": true, "startElement": true, "endElement": true}
	out := map[string]any{}
	for k, v := range c.args.m {
		if drop[k] {
			continue
		}
		out[k] = v
	}
	secret := func(v any) any {
		if s, ok := v.(string); ok {
			if _, isSecret := c.env.Output.Secrets.Lookup(s); isSecret {
				return "${" + s + "}"
			}
		}
		return v
	}
	if tool == "browser_type" {
		if t, ok := out["text"]; ok {
			out["text"] = secret(t)
		}
	}
	if fs, ok := out["fields"].([]any); ok {
		var fields []any
		for _, f := range fs {
			m, ok := f.(map[string]any)
			if !ok {
				continue
			}
			n := map[string]any{}
			for k, v := range m {
				if k != "target" && k != "ref" {
					n[k] = v
				}
			}
			if v, ok := n["value"]; ok {
				n["value"] = secret(v)
			}
			fields = append(fields, n)
		}
		out["fields"] = fields
	}
	return recording.MapStrings(out, c.secretVars).(map[string]any)
}

func (c *tabCall) redactTarget(t *recording.Target) {
	t.Name = c.secretVars(t.Name)
	t.Selector = c.secretVars(t.Selector)
	t.Given = c.secretVars(t.Given)
}

var secretTag = regexp.MustCompile(`<secret>([A-Za-z_][A-Za-z0-9_]*)</secret>`)

// secretVars writes every secret value in s as ${NAME}.
func (c *tabCall) secretVars(s string) string {
	if c.env.Output.Secrets == nil {
		return s
	}
	return secretTag.ReplaceAllString(c.env.Output.Secrets.Redact(s), "$${$1}")
}

// appendStepsLog appends a step to the session's steps log through the
// caller's os.Root. A failure is logged: the call is done already.
func (c *tabCall) appendStepsLog(file string, st recording.Step) {
	a, err := c.env.filesOf(c.sess)
	if err != nil {
		c.env.Log.Warn().Err(err).Msg("steps log: cannot open the output directory")
		return
	}
	defer a.Close()
	var b bytes.Buffer
	if err := recording.WriteJSONL(&b, st); err != nil {
		c.env.Log.Warn().Err(err).Msg("steps log")
		return
	}
	if _, err := a.Append(file, b.Bytes()); err != nil {
		c.env.Log.Warn().Err(err).Msg("steps log: cannot write")
	}
}

// sessionID is the id the recorder keys a call's steps by.
func sessionID(ctx context.Context, env *Env) (string, *session.Session) {
	if env.Session != nil {
		if s, err := env.Session(ctx); err == nil && s != nil {
			return s.ID(), s
		}
	}
	return "session", nil
}
