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

func TestLanguagesIsACopy(t *testing.T) {
	l := Languages()
	for _, want := range l {
		if got, err := ParseLanguage(string(want)); err != nil || got != want {
			t.Errorf("ParseLanguage(%q) = %q, %v", want, got, err)
		}
	}
	l[0] = "changed"
	if Languages()[0] == "changed" {
		t.Fatal("Languages() aliases the accepted languages")
	}
}
