package smoke

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/cloakmcp/cloakbrowser-mcp/pkg/recording"
)

const recordUsage = `usage: cloakbrowser-mcp smoke record [flags] STEPS.jsonl

Turns the steps log a server writes with --save-session (the
session-….steps.jsonl file beside the session's .md log in the output
directory) into a smoke scenario or a Playwright test, as
browser_export_test does. Writes to -o, or to stdout.

Flags:
`

// recordMain is `cloakbrowser-mcp smoke record`.
func recordMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("smoke record", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, recordUsage); fs.PrintDefaults() }
	format := fs.String("format", "smoke", "`FORMAT` to write: smoke, typescript, python, java or csharp")
	out := fs.String("o", "", "write to `FILE` instead of stdout")
	name := fs.String("name", "", "name of the scenario or test (default \"session\")")
	base := fs.String("base", "", "origin written as ${BASE} (default: the first page's)")
	from := fs.Int("from", 0, "first step `N` to export")
	to := fs.Int("to", 0, "last step `N` to export")
	steps := fs.String("steps", "", "only these steps, comma-separated (e.g. 1,2,5)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitPassed
		}
		return ExitInvalid
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "smoke record: "+format+"\n", a...)
		return ExitInvalid
	}
	if fs.NArg() != 1 {
		return fail("pass one steps log (session-….steps.jsonl, written with --save-session)")
	}
	f, err := recording.ParseFormat(*format)
	if err != nil {
		return fail("--format: %v", err)
	}
	o := recording.Options{Format: f, Name: *name, Base: *base, From: *from, To: *to, Source: "the steps log " + fs.Arg(0)}
	if *steps != "" {
		for _, s := range strings.Split(*steps, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || n < 1 {
				return fail("--steps %q: want step numbers like 1,2,5", quote(*steps))
			}
			o.Keep = append(o.Keep, n)
		}
	}
	data, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return fail("%v", err)
	}
	recorded, err := recording.ReadJSONL(fs.Arg(0), data)
	if err != nil {
		return fail("%v", err)
	}
	text, err := recording.Export(recorded, o)
	if err != nil {
		return fail("%s: %v", fs.Arg(0), err)
	}
	if *out == "" {
		_, err = stdout.Write(text)
	} else {
		err = os.WriteFile(*out, text, 0o644)
	}
	if err != nil {
		fmt.Fprintf(stderr, "smoke record: %v\n", err)
		return ExitFailed
	}
	if *out != "" {
		fmt.Fprintf(stderr, "smoke record: wrote %s\n", *out)
	}
	return ExitPassed
}
