package codegen

import (
	"strings"
	"testing"
)

func TestLongLiteralsAreClipped(t *testing.T) {
	long := strings.Repeat("Q", 5000)
	got := Quote(long)
	if len(got) > 200 || !strings.Contains(got, "(5000 chars)") {
		t.Fatalf("Quote of 5000 chars: %d bytes: %.200s", len(got), got)
	}
	if short := strings.Repeat("Q", maxLiteral); Quote(short) != "'"+short+"'" {
		t.Fatal("a literal of maxLiteral characters must stay whole")
	}
}
