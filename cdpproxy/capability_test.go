package cdpproxy

import (
	"encoding/base64"
	"strings"
	"testing"
)

func TestNewCapability(t *testing.T) {
	const n = 2000
	seen := make(map[string]bool, n)
	for i := 0; i < n; i++ {
		c := newCapability()
		if len(c) != CapabilityLen {
			t.Fatalf("capability length %d; want %d", len(c), CapabilityLen)
		}
		if strings.ContainsAny(c, "+/=") {
			t.Fatalf("capability %q is not unpadded base64url", c)
		}
		raw, err := base64.RawURLEncoding.DecodeString(c)
		if err != nil || len(raw) != capabilityBytes {
			t.Fatalf("capability decodes to %d bytes, %v; want %d", len(raw), err, capabilityBytes)
		}
		if seen[c] {
			t.Fatalf("capability repeated after %d draws", i)
		}
		seen[c] = true
	}
}

func TestCapabilityMatches(t *testing.T) {
	c := newCapability()
	d := digestOf(c)
	tests := []struct {
		name      string
		presented string
		want      bool
	}{
		{"same", c, true},
		{"other capability", newCapability(), false},
		{"empty", "", false},
		{"prefix", c[:42], false},
		{"longer", c + "A", false},
		{"last character changed", c[:42] + flip(c[42]), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := d.matches(tt.presented); got != tt.want {
				t.Fatalf("matches = %v; want %v", got, tt.want)
			}
		})
	}
	if unmatchable.matches(c) || unmatchable.matches("") {
		t.Fatal("the unpublished digest matched a value")
	}
}

func flip(b byte) string {
	if b == 'A' {
		return "B"
	}
	return "A"
}
