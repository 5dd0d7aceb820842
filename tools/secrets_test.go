package tools

import (
	"bytes"
	"testing"
)

func TestSecrets(t *testing.T) {
	s := NewSecrets(map[string]string{"PW": "abc123", "LONG": "abc123-and-more", "EMPTY": ""})
	cases := []struct{ name, in, want string }{
		{"value", "pw is abc123.", "pw is <secret>PW</secret>."},
		{"longer value first", "abc123-and-more", "<secret>LONG</secret>"},
		{"empty values are not redacted", "nothing here", "nothing here"},
		{"twice", "abc123abc123", "<secret>PW</secret><secret>PW</secret>"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := s.Redact(c.in); got != c.want {
				t.Fatalf("Redact(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
	if v, ok := s.Lookup("PW"); !ok || v != "abc123" {
		t.Fatalf("Lookup(PW) = %q, %v", v, ok)
	}
	if v, ok := s.Lookup("EMPTY"); ok || v != "EMPTY" {
		t.Fatalf("an empty secret is typed as its name: %q, %v", v, ok)
	}
	var buf bytes.Buffer
	w := s.Writer(&buf)
	if n, err := w.Write([]byte(`{"msg":"typed abc123"}`)); err != nil || n != 22 {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if buf.String() != `{"msg":"typed <secret>PW</secret>"}` {
		t.Fatalf("log line: %s", buf.String())
	}
	var none *Secrets
	if none.Redact("x") != "x" || none.Writer(&buf) != &buf || none.Names() != nil {
		t.Fatal("nil Secrets must be a no-op")
	}
}
