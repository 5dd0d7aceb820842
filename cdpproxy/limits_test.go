package cdpproxy

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestLimitsDefaults(t *testing.T) {
	tests := []struct {
		name string
		in   Limits
		want Limits
	}{
		{"zero takes defaults", Limits{}, Limits{
			MaxWebSockets: 8, MaxHTTPRequests: 16, MaxHeaderBytes: 16 << 10, MaxResponseBytes: 4 << 20,
			MaxMessageBytes: 16 << 20, Timeout: 10 * time.Second, ShutdownTimeout: 5 * time.Second,
		}},
		{"set fields kept", Limits{MaxWebSockets: 2, Timeout: time.Second}, Limits{
			MaxWebSockets: 2, MaxHTTPRequests: 16, MaxHeaderBytes: 16 << 10, MaxResponseBytes: 4 << 20,
			MaxMessageBytes: 16 << 20, Timeout: time.Second, ShutdownTimeout: 5 * time.Second,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.in.withDefaults(); got != tt.want {
				t.Fatalf("withDefaults() = %+v; want %+v", got, tt.want)
			}
		})
	}
}

func TestLimitsValidate(t *testing.T) {
	tests := []struct {
		name string
		in   Limits
		want string
	}{
		{"zero", Limits{}, ""},
		{"negative sockets", Limits{MaxWebSockets: -1}, "MaxWebSockets"},
		{"negative response", Limits{MaxResponseBytes: -1}, "MaxResponseBytes"},
		{"negative timeout", Limits{Timeout: -time.Second}, "Timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.in.validate()
			if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("validate() = %v; want %q", err, tt.want)
			}
		})
	}
}

func TestRejectionsTotal(t *testing.T) {
	if got := (Rejections{Capability: 1, Host: 2, Origin: 3}).Total(); got != 6 {
		t.Fatalf("Total = %d", got)
	}
}

func TestSentinelsDistinct(t *testing.T) {
	all := []error{ErrRevoked, ErrPortInUse, ErrLimit, ErrClosed}
	for i, a := range all {
		for j, b := range all {
			if (i == j) != errors.Is(a, b) {
				t.Fatalf("errors.Is(%v, %v) = %v", a, b, errors.Is(a, b))
			}
		}
	}
}
