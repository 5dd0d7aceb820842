package tools

import (
	"io"
	"sort"
	"strings"
)

// Secrets are the --secrets values (upstream's dotenv file): text an agent
// types that equals a secret's NAME is typed as its value, and every value
// is replaced by <secret>NAME</secret> in responses and logs, so the agent
// (and whoever reads its transcript or our stderr) never sees it.
type Secrets struct {
	names  []string          // sorted, for codegen
	values map[string]string // NAME → value
	// order is the names by decreasing value length: a value that contains
	// another is redacted first.
	order []string
}

// NewSecrets builds Secrets from NAME → value; nil when there are none.
// Empty values are never redacted (they would match everywhere).
func NewSecrets(m map[string]string) *Secrets {
	if len(m) == 0 {
		return nil
	}
	s := &Secrets{values: map[string]string{}}
	for k, v := range m {
		s.values[k] = v
		s.names = append(s.names, k)
	}
	sort.Strings(s.names)
	s.order = append([]string(nil), s.names...)
	sort.SliceStable(s.order, func(i, j int) bool { return len(s.values[s.order[i]]) > len(s.values[s.order[j]]) })
	return s
}

// Names are the secrets' names, sorted.
func (s *Secrets) Names() []string {
	if s == nil {
		return nil
	}
	return s.names
}

// Lookup returns what to type for text: the secret's value when text is a
// secret's name.
func (s *Secrets) Lookup(text string) (value string, secret bool) {
	if s == nil {
		return text, false
	}
	if v, ok := s.values[text]; ok && v != "" {
		return v, true
	}
	return text, false
}

// Redact replaces every secret value in text by <secret>NAME</secret>.
func (s *Secrets) Redact(text string) string {
	if s == nil {
		return text
	}
	for _, n := range s.order {
		if v := s.values[n]; v != "" && strings.Contains(text, v) {
			text = strings.ReplaceAll(text, v, "<secret>"+n+"</secret>")
		}
	}
	return text
}

// Writer redacts what is written to w: the server's logs go through it.
// zerolog writes one event per Write, so a value is never split across
// two calls.
func (s *Secrets) Writer(w io.Writer) io.Writer {
	if s == nil {
		return w
	}
	return redactWriter{w: w, s: s}
}

type redactWriter struct {
	w io.Writer
	s *Secrets
}

func (r redactWriter) Write(p []byte) (int, error) {
	out := r.s.Redact(string(p))
	if _, err := io.WriteString(r.w, out); err != nil {
		return 0, err
	}
	return len(p), nil
}
