package driver

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/atomicfile"
)

// A first launch waits for the driver's start (node loading playwright-core,
// about 270 ms) and then for the browser's (about 230 ms). A prelaunch
// overlaps them: the browser Playwright is about to launch starts as the
// driver does (the server starts it, early_linux.go, or, should that fail,
// the driver's node before it loads playwright-core), and the driver hands that
// process to Playwright's launch when the launch asks for exactly it
// (prelaunch.js).
//
// What Playwright will run is not known before playwright-core has loaded:
// its argv adds Playwright's default switches to ours. So the driver keeps
// the argv each launch ran, with what changes between launches (the
// profile, a fingerprint seed) replaced by placeholders, in a record beside
// itself (prelaunch/<key>.json), and a later start predicts the next launch
// from it. A prediction that does not match what Playwright spawns (another
// Playwright, other options) is killed before Playwright starts its own
// browser, and the record is written again: a prelaunch never changes what
// runs, only when it starts.

// Prelaunch is a browser launch a session is about to ask of a driver that
// has not started yet.
type Prelaunch struct {
	// Command is the browser binary.
	Command string
	// Key is what the launch's argv follows from (the session's own args,
	// headless or not…) with Vars' values replaced by their placeholders:
	// it names the record.
	Key []string
	// Vars maps a placeholder to this launch's value of something that
	// differs between launches of the same Key: a profile directory, a whole
	// seed argument. Values are replaced as substrings, so each must be
	// unique enough not to occur by chance (a path, a whole --name=value);
	// no placeholder may begin another ({{…}} tokens).
	Vars map[string]string
	// Env is the environment the launch will pass to the browser, exactly.
	Env map[string]string
}

// prelaunchPlan is what run hands prelaunch.js (a private file, writePlan's,
// removed by the script once read).
type prelaunchPlan struct {
	Record  string            `json:"record"`
	Vars    map[string]string `json:"vars"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	// Adopt is the browser the server started for the plan, which node
	// adopts instead of starting one (early_linux.go); nil: node starts it.
	Adopt *earlyAdopt `json:"adopt,omitempty"`
}

// prelaunchRecord is one launch's argv kept as a template.
type prelaunchRecord struct {
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

// PrelaunchEnv set to "off" never prelaunches a browser.
const PrelaunchEnv = "CLOAKBROWSER_MCP_PRELAUNCH"

// driverPrelaunchEnv names the plan file for the shim's preload.
const driverPrelaunchEnv = "CLOAKBROWSER_MCP_DRIVER_PRELAUNCH"

//go:embed prelaunch.js
var prelaunchJS string

// PrelaunchResult is what BeginPrelaunch did.
type PrelaunchResult int

const (
	// NotPrelaunched: the driver was running or starting already (or
	// prelaunches are off or not possible here); this was Begin.
	NotPrelaunched PrelaunchResult = iota
	// PrelaunchRecording: the driver starts without a browser, for want of
	// a record of this launch; its launch will be kept as one.
	PrelaunchRecording
	// Prelaunched: the driver starts the browser the record predicts.
	Prelaunched
)

// BeginPrelaunch is Begin for a driver about to serve p. Only a driver
// that has not started yet takes p (a running one has nothing left to
// overlap) and only where the driver runs through its shim with a private
// TMPDIR (Linux).
func (d *Driver) BeginPrelaunch(p Prelaunch) PrelaunchResult {
	res := NotPrelaunched
	d.mu.Lock()
	if d.cur == nil && !d.closed && !d.starts.Running() && d.tmp != "" && p.Command != "" && os.Getenv(PrelaunchEnv) != "off" {
		plan := &prelaunchPlan{Record: d.prelaunchRecord(p), Vars: p.Vars}
		res = PrelaunchRecording
		if args, ok := predict(plan.Record, p); ok {
			plan.Command, plan.Args, plan.Env = p.Command, args, p.Env
			res = Prelaunched
		}
		d.prelaunch = plan
	}
	d.mu.Unlock()
	d.Begin()
	return res
}

// takePrelaunch returns the prelaunch BeginPrelaunch left for this start
// (nil for none) and forgets it.
func (d *Driver) takePrelaunch() *prelaunchPlan {
	d.mu.Lock()
	defer d.mu.Unlock()
	plan := d.prelaunch
	d.prelaunch = nil
	return plan
}

// writePlan puts plan in the driver's private TMPDIR for prelaunch.js and
// returns the file ("" for no plan, or one that could not be written: the
// driver then starts without it).
func (d *Driver) writePlan(plan *prelaunchPlan) string {
	if plan == nil {
		return ""
	}
	b, err := json.Marshal(plan)
	if err != nil {
		return ""
	}
	file := filepath.Join(d.tmp, "prelaunch-plan.json")
	if atomicfile.WriteBytes(file, 0o600, b) != nil {
		return ""
	}
	return file
}

// prelaunchRecord is the record file for p's key.
func (d *Driver) prelaunchRecord(p Prelaunch) string {
	h := sha256.New()
	h.Write([]byte(p.Command))
	for _, k := range p.Key {
		h.Write([]byte{0})
		h.Write([]byte(k))
	}
	return filepath.Join(d.opts.Dir, "prelaunch", hex.EncodeToString(h.Sum(nil)[:8])+".json")
}

// predict reads the record and fills its placeholders with p's values.
func predict(record string, p Prelaunch) ([]string, bool) {
	b, err := os.ReadFile(record)
	if err != nil {
		return nil, false
	}
	var r prelaunchRecord
	if json.Unmarshal(b, &r) != nil || r.Command != p.Command || len(r.Args) == 0 {
		return nil, false
	}
	// No placeholder begins another (Vars): one pass fills them all.
	pairs := make([]string, 0, 2*len(p.Vars))
	for k, v := range p.Vars {
		pairs = append(pairs, k, v)
	}
	fill := strings.NewReplacer(pairs...)
	args := make([]string, len(r.Args))
	for i, a := range r.Args {
		args[i] = fill.Replace(a)
	}
	return args, true
}

// writePrelaunchJS keeps the preload in dir (see writeOnce).
func writePrelaunchJS(dir string) (string, error) {
	return writeOnce(dir, "prelaunch-", ".js", 0o644, prelaunchJS)
}
