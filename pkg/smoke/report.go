package smoke

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/atomicfile"
)

// JUnit XML in the shape GitLab, GitHub (test-reporter actions) and Jenkins
// render: one testsuite per scenario file, one testcase per step.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Errors    int         `xml:"errors,attr"`
	Skipped   int         `xml:"skipped,attr"`
	Time      string      `xml:"time,attr"`
	Timestamp string      `xml:"timestamp,attr"`
	File      string      `xml:"file,attr,omitempty"`
	Error     *junitFault `xml:"error,omitempty"`
	Cases     []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string      `xml:"name,attr"`
	Classname string      `xml:"classname,attr"`
	File      string      `xml:"file,attr,omitempty"`
	Line      int         `xml:"line,attr,omitempty"`
	Time      string      `xml:"time,attr"`
	Failure   *junitFault `xml:"failure,omitempty"`
	Skipped   *struct{}   `xml:"skipped,omitempty"`
	SystemOut string      `xml:"system-out,omitempty"`
}

type junitFault struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",cdata"`
}

func secs(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// WriteJUnit writes results as JUnit XML. A scenario that could not run its
// steps (server did not start, invalid, interrupted) is a suite with an
// <error>; its steps are skipped.
func WriteJUnit(w io.Writer, results []*Result) error {
	out := junitSuites{Name: "cloakbrowser-mcp smoke"}
	var total time.Duration
	for _, r := range results {
		s := junitSuite{Name: r.Name, File: r.File, Time: secs(r.Duration), Timestamp: r.Started.UTC().Format(time.RFC3339)}
		if r.Error != "" {
			s.Errors = 1
			s.Error = &junitFault{Message: xmlSafe(firstLine(r.Error)), Type: string(r.Status), Text: xmlSafe(r.Error)}
		}
		for _, st := range r.Steps {
			c := junitCase{
				Name:      fmt.Sprintf("%02d %s", st.Index, st.Name),
				Classname: r.Name, File: r.File, Line: st.Line, Time: secs(st.Duration),
			}
			switch st.Status {
			case Failed:
				s.Failures++
				c.Failure = &junitFault{Message: xmlSafe(firstLine(st.Failure)), Type: "expectation",
					Text: xmlSafe(st.Failure + "\n\nResponse excerpt:\n" + st.Excerpt)}
			case Skipped:
				s.Skipped++
				c.Skipped = &struct{}{}
			}
			if len(st.Artifacts) > 0 {
				var b strings.Builder
				for _, a := range st.Artifacts {
					abs, err := filepath.Abs(a)
					if err != nil {
						abs = a
					}
					fmt.Fprintf(&b, "[[ATTACHMENT|%s]]\n", abs) // GitLab and Jenkins attach these
				}
				c.SystemOut = b.String()
			}
			s.Cases = append(s.Cases, c)
		}
		s.Tests = len(s.Cases)
		out.Tests += s.Tests
		out.Failures += s.Failures
		out.Errors += s.Errors
		out.Skipped += s.Skipped
		total += r.Duration
		out.Suites = append(out.Suites, s)
	}
	out.Time = secs(total)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// WriteJSON writes results as a JSON report: {passed, scenarios: [...]}.
func WriteJSON(w io.Writer, results []*Result) error {
	passed := true
	for _, r := range results {
		passed = passed && r.Passed()
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Passed    bool      `json:"passed"`
		Scenarios []*Result `json:"scenarios"`
	}{passed, results})
}

// writeFile writes a report atomically enough for CI: a temp file renamed.
func writeFile(path string, write func(io.Writer) error) error {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	return atomicfile.Write(path, 0o644, write)
}

// WriteSummary writes a table of the scenarios: status, steps passed, time.
func WriteSummary(w io.Writer, results []*Result, color bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\tSCENARIO\tFILE\tSTEPS\tTIME\tSTATUS")
	for _, r := range results {
		ok := 0
		for _, s := range r.Steps {
			if s.Status == Passed {
				ok++
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%s\t%s\n", mark(r.Status, color), quote(r.Name), r.File, ok, len(r.Steps), r.Duration.Round(time.Millisecond), r.Status)
	}
	tw.Flush()
}

// xmlSafe drops the characters XML 1.0 cannot hold (control characters a
// page or a server log may contain).
func xmlSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' || (r >= 0x20 && r != 0xFFFE && r != 0xFFFF && r != utf8.RuneError) {
			return r
		}
		return -1
	}, s)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return quote(s)
}
