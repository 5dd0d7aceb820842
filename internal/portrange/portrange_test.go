package portrange

import (
	"strconv"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Range
		wantErr string // substring; empty means success
	}{
		{name: "single", in: "9222", want: Range{9222, 9222}},
		{name: "range", in: "9222-9230", want: Range{9222, 9230}},
		{name: "same ends", in: "9222-9222", want: Range{9222, 9222}},
		{name: "spaces around", in: " 9222-9230 ", want: Range{9222, 9230}},
		{name: "whole space", in: "1-65535", want: Range{1, 65535}},
		{name: "empty", in: "", wantErr: "empty"},
		{name: "blank", in: "   ", wantErr: "empty"},
		{name: "zero", in: "0", wantErr: "out of range"},
		{name: "too high", in: "65536", wantErr: "out of range"},
		{name: "too long", in: "0009222", wantErr: "out of range"},
		{name: "range end too high", in: "9222-70000", wantErr: "out of range"},
		{name: "reversed", in: "9230-9222", wantErr: "reversed"},
		{name: "junk", in: "abc", wantErr: "not a decimal"},
		{name: "sign", in: "+9222", wantErr: "not a decimal"},
		{name: "hex", in: "0x22", wantErr: "not a decimal"},
		{name: "open end", in: "9222-", wantErr: "missing"},
		{name: "open start", in: "-9222", wantErr: "missing"},
		{name: "three parts", in: "1-2-3", wantErr: "not a decimal"},
		{name: "inner spaces", in: "9222 - 9230", wantErr: "not a decimal"},
		{name: "comma list", in: "9222,9223", wantErr: "not a decimal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse(%q) = %v, %v; want error containing %q", tt.in, got, err, tt.wantErr)
				}
				if want := "port range " + strconv.Quote(tt.in) + ": "; !strings.HasPrefix(err.Error(), want) {
					t.Errorf("error %q does not start with %q", err, want)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Parse(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
			if back, err := Parse(got.String()); err != nil || back != got {
				t.Errorf("String() %q does not round-trip: %v, %v", got.String(), back, err)
			}
		})
	}
}

func TestLen(t *testing.T) {
	for _, tt := range []struct {
		r    Range
		want int
	}{{Range{9222, 9222}, 1}, {Range{9222, 9230}, 9}, {Range{1, 65535}, 65535}} {
		if got := tt.r.Len(); got != tt.want {
			t.Errorf("%v.Len() = %d, want %d", tt.r, got, tt.want)
		}
	}
}
