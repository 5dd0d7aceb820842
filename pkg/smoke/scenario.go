package smoke

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"regexp/syntax"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// ErrInvalid is matched (errors.Is) by every error about a scenario file
// that is malformed: the runner exits 2 for them.
var ErrInvalid = errors.New("invalid scenario")

// InvalidError says what is wrong with a scenario and where.
type InvalidError struct {
	// File is the scenario's path; Line its 1-based line (0 when unknown).
	File string
	Line int
	// Msg names the step and field and says what to change.
	Msg string
}

func (e *InvalidError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }

// Scenario is one smoke scenario file.
type Scenario struct {
	// Name is shown in progress lines and reports. If empty, the file name.
	Name string `yaml:"name" json:"name"`
	// Env are default values of ${VAR}s; the process environment wins.
	Env map[string]string `yaml:"env" json:"env,omitempty"`
	// Server holds flags for a server the runner starts.
	Server ServerSpec `yaml:"server" json:"server,omitempty"`
	// Serve is a directory, relative to the file, that the runner serves on
	// loopback for this scenario, setting ${BASE} to its URL.
	Serve string `yaml:"serve" json:"serve,omitempty"`
	// Steps run in order; the first failing step ends the scenario.
	Steps []Step `yaml:"steps" json:"steps"`

	// File is the path the scenario was read from.
	File string `yaml:"-" json:"file"`

	lines map[string]int // YAML path → line
}

// ServerSpec configures the server the runner starts for a scenario.
type ServerSpec struct {
	// Args are flags added to the server's command line.
	Args []string `yaml:"args" json:"args,omitempty"`
}

// Step is one tool call with its expectations.
type Step struct {
	// Name labels the step in reports. If empty, the tool name.
	Name string `yaml:"name" json:"name,omitempty"`
	// Tool is the MCP tool to call.
	Tool string `yaml:"tool" json:"tool"`
	// Args are the tool's arguments. A "target" given as a mapping
	// {role, name[, nth]} is resolved to a ref from a fresh snapshot.
	Args map[string]any `yaml:"args" json:"args,omitempty"`
	// Expect is checked against the response.
	Expect Expect `yaml:"expect" json:"expect,omitempty"`
	// Save captures variables from the response text: NAME → regular
	// expression; the first group if it has one, else the whole match.
	Save map[string]string `yaml:"save" json:"save,omitempty"`

	// Line is the step's line in its file.
	Line int `yaml:"-" json:"line"`
}

// Expect is what a step's response must satisfy. The zero value expects
// only that the tool does not report an error.
type Expect struct {
	// Contains must all appear in the response text.
	Contains []string `yaml:"contains" json:"contains,omitempty"`
	// NotContains must not appear in it.
	NotContains []string `yaml:"not_contains" json:"not_contains,omitempty"`
	// Matches are regular expressions (Go RE2 syntax) that must all match.
	Matches []string `yaml:"matches" json:"matches,omitempty"`
	// SnapshotHas are elements that must be in the snapshot the response
	// holds (for browser_snapshot, browser_navigate…).
	SnapshotHas []RoleName `yaml:"snapshot_has" json:"snapshot_has,omitempty"`
	// URL is the URL the page must show after the step (after ${VAR}s,
	// exactly); Title its title; Text are texts its snapshot must hold.
	// These, and SnapshotHas, are read from the page (a fresh
	// browser_snapshot when the response has no whole one) and retried
	// until Options.ExpectTimeout: a page still settling gets its time.
	URL   string   `yaml:"url" json:"url,omitempty"`
	Title string   `yaml:"title" json:"title,omitempty"`
	Text  []string `yaml:"text" json:"text,omitempty"`
	// IsError, when true, expects the tool to report an error.
	IsError bool `yaml:"is_error" json:"is_error,omitempty"`
	// MaxMS fails the step when the call takes longer (milliseconds). If
	// zero, no bound beyond the runner's --timeout.
	MaxMS int `yaml:"max_ms" json:"max_ms,omitempty"`
}

// RoleName names an element of a snapshot by its role and accessible name
// (or, for elements without a name, their text), like getByRole.
type RoleName struct {
	Role string `yaml:"role" json:"role"`
	Name string `yaml:"name" json:"name,omitempty"`
	// Nth picks among several matches, from 0 in document order.
	Nth int `yaml:"nth" json:"nth,omitempty"`
}

func (r RoleName) String() string {
	s := r.Role
	if r.Name != "" {
		s += fmt.Sprintf(" %q", r.Name)
	}
	if r.Nth > 0 {
		s += fmt.Sprintf(" (nth %d)", r.Nth)
	}
	return s
}

// LoadFile reads and checks a scenario file (.yaml, .yml or .json).
func LoadFile(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &InvalidError{File: path, Msg: fmt.Sprintf("cannot read: %v", errors.Unwrap(err))}
	}
	return Parse(path, data)
}

// Parse decodes and checks a scenario. file names it in errors and
// resolves a relative Serve directory. JSON is accepted (it is YAML).
func Parse(file string, data []byte) (*Scenario, error) {
	sc := Scenario{File: file, lines: map[string]int{}}
	pos := map[[2]int]string{} // line, column of a value → its path
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, yamlError(file, err, pos)
	}
	sc.indexLines(f, pos)
	if err := yaml.UnmarshalWithOptions(data, &sc, yaml.DisallowUnknownField()); err != nil {
		return nil, yamlError(file, err, pos)
	}
	if sc.Name == "" {
		sc.Name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	}
	for i := range sc.Steps {
		sc.Steps[i].Line = sc.line(fmt.Sprintf("$.steps[%d]", i))
	}
	if err := sc.check(); err != nil {
		return nil, err
	}
	return &sc, nil
}

// yamlError turns a go-yaml error into an InvalidError with its line and,
// for a value of the wrong type, the field and the type it needs.
func yamlError(file string, err error, pos map[[2]int]string) error {
	var ye yaml.Error
	if !errors.As(err, &ye) {
		return &InvalidError{File: file, Msg: err.Error()}
	}
	line := 0
	tk := ye.GetToken()
	if tk != nil && tk.Position != nil {
		line = tk.Position.Line
	}
	msg := ye.GetMessage()
	var te *yaml.TypeError
	if errors.As(err, &te) && tk != nil && tk.Position != nil {
		if path, ok := pos[[2]int{tk.Position.Line, tk.Position.Column}]; ok {
			msg = fmt.Sprintf("%s: %q is %s, want %s", fieldName(path), quote(tk.Value), kindName(te.SrcType), kindName(te.DstType))
		}
	}
	if strings.Contains(msg, "unknown field") {
		msg += " (see docs/smoke.md for the keys)"
	}
	return &InvalidError{File: file, Line: line, Msg: msg}
}

var stepPath = regexp.MustCompile(`^\$\.steps\[(\d+)\]\.?`)

// fieldName turns $.steps[0].expect.max_ms into "step 1: expect.max_ms".
func fieldName(path string) string {
	if m := stepPath.FindStringSubmatch(path); m != nil {
		n, _ := strconv.Atoi(m[1])
		return fmt.Sprintf("step %d: %s", n+1, path[len(m[0]):])
	}
	return strings.TrimPrefix(path, "$.")
}

func kindName(t reflect.Type) string {
	if t == nil {
		return "a value"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int64, reflect.Uint64, reflect.Float64, reflect.Int32, reflect.Uint, reflect.Uint32:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping"
	}
	return "a " + t.String()
}

// indexLines records the line of every mapping value and sequence item by
// its YAML path ($.steps[1].expect.matches[0]).
func (sc *Scenario) indexLines(f *ast.File, pos map[[2]int]string) {
	var walk func(path string, n ast.Node)
	walk = func(path string, n ast.Node) {
		if n == nil {
			return
		}
		if tk := n.GetToken(); tk != nil && tk.Position != nil {
			if _, ok := sc.lines[path]; !ok {
				sc.lines[path] = tk.Position.Line
			}
			pos[[2]int{tk.Position.Line, tk.Position.Column}] = path
		}
		switch v := n.(type) {
		case *ast.MappingNode:
			for _, kv := range v.Values {
				walk(path, kv)
			}
		case *ast.MappingValueNode:
			key := path + "." + strings.Trim(v.Key.String(), `"'`)
			if tk := v.Key.GetToken(); tk != nil && tk.Position != nil {
				sc.lines[key] = tk.Position.Line
			}
			walk(key, v.Value)
		case *ast.SequenceNode:
			for i, item := range v.Values {
				walk(fmt.Sprintf("%s[%d]", path, i), item)
			}
		case *ast.DocumentNode:
			walk(path, v.Body)
		}
	}
	for _, d := range f.Docs {
		walk("$", d)
	}
}

// line is the line of path, or of its closest recorded parent.
func (sc *Scenario) line(path string) int {
	for path != "" {
		if l, ok := sc.lines[path]; ok {
			return l
		}
		i := strings.LastIndexAny(path, ".[")
		if i <= 0 {
			break
		}
		path = path[:i]
	}
	return 0
}

func (sc *Scenario) invalid(path, format string, a ...any) *InvalidError {
	return &InvalidError{File: sc.File, Line: sc.line(path), Msg: fmt.Sprintf(format, a...)}
}

var (
	varRef  = regexp.MustCompile(`\$\{([^}]*)\}`)
	varName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	toolRe  = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
)

// check validates what does not depend on the environment or the server.
func (sc *Scenario) check() error {
	var errs []error
	add := func(e *InvalidError) { errs = append(errs, e) }
	if len(sc.Steps) == 0 {
		add(sc.invalid("$", "no steps: add a steps: list of {tool, args, expect}"))
	}
	for k := range sc.Env {
		if !varName.MatchString(k) {
			add(sc.invalid("$.env."+k, "env: %q is not a variable name (letters, digits, _)", quote(k)))
		}
	}
	for i, st := range sc.Steps {
		p := fmt.Sprintf("$.steps[%d]", i)
		where := fmt.Sprintf("step %d", i+1)
		if st.Tool == "" {
			add(sc.invalid(p, "%s: tool is missing (e.g. tool: browser_snapshot)", where))
		} else if !toolRe.MatchString(st.Tool) {
			add(sc.invalid(p+".tool", "%s: tool %q is not a tool name", where, quote(st.Tool)))
		}
		for _, ta := range targetArgs(st.Args) {
			if _, err := targetArg(ta.get()); err != nil {
				add(sc.invalid(p+".args."+ta.path, "%s: args.%s: %v", where, ta.path, err))
			}
		}
		for j, m := range st.Expect.Matches {
			if _, err := regexp.Compile(blankVars(m)); err != nil {
				add(sc.invalid(fmt.Sprintf("%s.expect.matches[%d]", p, j), "%s: expect.matches[%d]: invalid regular expression %q: %v", where, j, quote(m), regexpReason(err)))
			}
		}
		for j, r := range st.Expect.SnapshotHas {
			if r.Role == "" {
				add(sc.invalid(fmt.Sprintf("%s.expect.snapshot_has[%d]", p, j), "%s: expect.snapshot_has[%d]: role is missing (e.g. {role: button, name: Save})", where, j))
			}
		}
		if st.Expect.MaxMS < 0 {
			add(sc.invalid(p+".expect.max_ms", "%s: expect.max_ms must be a positive number of milliseconds", where))
		}
		for _, k := range sortedKeys(st.Save) {
			if !varName.MatchString(k) {
				add(sc.invalid(p+".save."+k, "%s: save: %q is not a variable name (letters, digits, _)", where, quote(k)))
			}
			if _, err := regexp.Compile(st.Save[k]); err != nil {
				add(sc.invalid(p+".save."+k, "%s: save.%s: invalid regular expression %q: %v", where, k, quote(st.Save[k]), regexpReason(err)))
			}
		}
	}
	return errors.Join(errs...)
}

// CheckVars reports every ${VAR} that would have no value when the
// scenario runs: defined are the names known before the first step (env,
// the process environment, BASE from a served directory); names saved by a
// step count from the next step on.
func (sc *Scenario) CheckVars(defined func(name string) bool) error {
	known := func(n string) bool {
		if _, ok := sc.Env[n]; ok {
			return true
		}
		return defined != nil && defined(n)
	}
	saved := map[string]bool{}
	var errs []error
	for i, st := range sc.Steps {
		p := fmt.Sprintf("$.steps[%d]", i)
		visitStrings(st.Args, p+".args", func(path, s string) {
			errs = append(errs, sc.undefined(path, i, s, known, saved)...)
		})
		for j, s := range st.Expect.Contains {
			errs = append(errs, sc.undefined(fmt.Sprintf("%s.expect.contains[%d]", p, j), i, s, known, saved)...)
		}
		for j, s := range st.Expect.NotContains {
			errs = append(errs, sc.undefined(fmt.Sprintf("%s.expect.not_contains[%d]", p, j), i, s, known, saved)...)
		}
		for j, s := range st.Expect.Matches {
			errs = append(errs, sc.undefined(fmt.Sprintf("%s.expect.matches[%d]", p, j), i, s, known, saved)...)
		}
		for j, r := range st.Expect.SnapshotHas {
			errs = append(errs, sc.undefined(fmt.Sprintf("%s.expect.snapshot_has[%d]", p, j), i, r.Name, known, saved)...)
		}
		errs = append(errs, sc.undefined(p+".expect.url", i, st.Expect.URL, known, saved)...)
		errs = append(errs, sc.undefined(p+".expect.title", i, st.Expect.Title, known, saved)...)
		for j, s := range st.Expect.Text {
			errs = append(errs, sc.undefined(fmt.Sprintf("%s.expect.text[%d]", p, j), i, s, known, saved)...)
		}
		for k := range st.Save {
			saved[k] = true
		}
	}
	return errors.Join(errs...)
}

// varNames are the names of every ${VAR} the scenario's steps use.
func (sc *Scenario) varNames() []string {
	seen := map[string]bool{}
	var names []string
	add := func(_, s string) {
		for _, m := range varRef.FindAllStringSubmatch(s, -1) {
			if !seen[m[1]] {
				seen[m[1]] = true
				names = append(names, m[1])
			}
		}
	}
	for i, st := range sc.Steps {
		p := fmt.Sprintf("$.steps[%d]", i)
		visitStrings(st.Args, p, add)
		ex := st.Expect
		for _, s := range slices.Concat(ex.Contains, ex.NotContains, ex.Matches, ex.Text, []string{ex.URL, ex.Title}) {
			add("", s)
		}
		for _, r := range ex.SnapshotHas {
			add("", r.Name)
		}
	}
	return names
}

func (sc *Scenario) undefined(path string, step int, s string, known func(string) bool, saved map[string]bool) []error {
	var errs []error
	for _, m := range varRef.FindAllStringSubmatch(s, -1) {
		name := m[1]
		field := strings.TrimPrefix(path, fmt.Sprintf("$.steps[%d].", step))
		switch {
		case !varName.MatchString(name):
			errs = append(errs, sc.invalid(path, "step %d: %s: ${%s} is not a variable name", step+1, field, quote(name)))
		case known(name) || saved[name]:
		default:
			errs = append(errs, sc.invalid(path, "step %d: %s: ${%s} has no value: set it under env:, in the environment, or with save: in an earlier step", step+1, field, name))
		}
	}
	return errs
}

// visitStrings calls fn for every string inside v with its YAML path.
func visitStrings(v any, path string, fn func(path, s string)) {
	switch x := v.(type) {
	case string:
		fn(path, x)
	case map[string]any:
		for _, k := range sortedKeys(x) {
			visitStrings(x[k], path+"."+k, fn)
		}
	case []any:
		for i, e := range x {
			visitStrings(e, fmt.Sprintf("%s[%d]", path, i), fn)
		}
	}
}

// expand replaces ${NAME} in s with vars[NAME].
func expand(s string, vars map[string]string) string {
	return varRef.ReplaceAllStringFunc(s, func(m string) string {
		if v, ok := vars[m[2:len(m)-1]]; ok {
			return v
		}
		return m
	})
}

// expandAny returns a copy of v with every string expanded.
func expandAny(v any, vars map[string]string) any {
	switch x := v.(type) {
	case string:
		return expand(x, vars)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = expandAny(e, vars)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = expandAny(e, vars)
		}
		return out
	}
	return v
}

// blankVars replaces ${NAME} with a literal so a pattern can be compiled
// before the variables have values.
func blankVars(s string) string { return varRef.ReplaceAllString(s, "x") }

// targetRef is an argument that names an element: args.target,
// startTarget, endTarget, or fields[i].target (browser_fill_form).
type targetRef struct {
	path string
	get  func() any
	set  func(any)
}

// targetArgs lists the element arguments of args.
func targetArgs(args map[string]any) []targetRef {
	var out []targetRef
	for _, k := range []string{"target", "startTarget", "endTarget"} {
		if _, ok := args[k]; ok {
			out = append(out, targetRef{path: k, get: func() any { return args[k] }, set: func(v any) { args[k] = v }})
		}
	}
	if fs, ok := args["fields"].([]any); ok {
		for i, f := range fs {
			if m, ok := f.(map[string]any); ok {
				if _, ok := m["target"]; ok {
					out = append(out, targetRef{path: fmt.Sprintf("fields[%d].target", i), get: func() any { return m["target"] }, set: func(v any) { m["target"] = v }})
				}
			}
		}
	}
	return out
}

// targetArg reads a target given as a mapping {role, name, nth}; a string
// target returns nil (passed through as a ref or selector).
func targetArg(v any) (*RoleName, error) {
	switch x := v.(type) {
	case string:
		return nil, nil
	case map[string]any:
		var r RoleName
		for _, k := range sortedKeys(x) {
			switch k {
			case "role", "name":
				s, ok := x[k].(string)
				if !ok {
					return nil, fmt.Errorf("%s must be a string", k)
				}
				if k == "role" {
					r.Role = s
				} else {
					r.Name = s
				}
			case "nth":
				n, ok := toInt(x[k])
				if !ok || n < 0 {
					return nil, fmt.Errorf("nth must be a number ≥ 0")
				}
				r.Nth = n
			default:
				return nil, fmt.Errorf("unknown key %q (use role, name, nth)", quote(k))
			}
		}
		if r.Role == "" {
			return nil, fmt.Errorf("role is missing (e.g. {role: button, name: Save})")
		}
		return &r, nil
	default:
		return nil, fmt.Errorf("must be a ref or selector string, or {role, name[, nth]}")
	}
}

func toInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(n), true
	case uint64:
		return int(n), true
	case float64:
		return int(n), n == float64(int(n))
	}
	return 0, false
}

func regexpReason(err error) string {
	var se *syntax.Error
	if errors.As(err, &se) {
		return string(se.Code)
	}
	return err.Error()
}

// quote shortens a user value for an error message.
func quote(s string) string {
	if r := []rune(s); len(r) > 100 {
		return string(r[:100]) + "…"
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
