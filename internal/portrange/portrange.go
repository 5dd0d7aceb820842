// Package portrange parses an inclusive range of TCP ports, the form of
// --cdp-port-range ("9222" or "9222-9230"). It is a leaf that imports nothing
// of this module, so pkg/config (which validates the flag) and cdpproxy
// (which leases the ports) share one parser without depending on each other.
package portrange

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Range is an inclusive range of TCP ports, First <= Last, both in 1–65535.
type Range struct {
	First, Last int
}

// String formats the range as Parse accepts it: "9222" or "9222-9230".
func (r Range) String() string {
	if r.First == r.Last {
		return strconv.Itoa(r.First)
	}
	return strconv.Itoa(r.First) + "-" + strconv.Itoa(r.Last)
}

// Len is the number of ports in the range.
func (r Range) Len() int { return r.Last - r.First + 1 }

// Parse parses "9222" or "9222-9230". Ports are decimal, 1–65535, and the
// first may not exceed the last. The error quotes s and says what is wrong.
func Parse(s string) (Range, error) {
	spec := strings.TrimSpace(s)
	if spec == "" {
		return Range{}, fmt.Errorf("port range %q: empty; want a port like 9222 or a range like 9222-9230", s)
	}
	firstStr, lastStr, isRange := strings.Cut(spec, "-")
	first, err := ParsePort(firstStr)
	if err != nil {
		return Range{}, fmt.Errorf("port range %q: %w", s, err)
	}
	last := first
	if isRange {
		if last, err = ParsePort(lastStr); err != nil {
			return Range{}, fmt.Errorf("port range %q: %w", s, err)
		}
	}
	if first > last {
		return Range{}, fmt.Errorf("port range %q: reversed: first port %d is above last port %d", s, first, last)
	}
	return Range{First: first, Last: last}, nil
}

// ParsePort parses one decimal TCP port, 1–65535 (no sign, no spaces).
func ParsePort(s string) (int, error) {
	if s == "" {
		return 0, errors.New("missing port number")
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("port %q is not a decimal number", s)
		}
	}
	if len(s) > 5 {
		return 0, fmt.Errorf("port %s out of range 1-65535", s)
	}
	n, _ := strconv.Atoi(s)
	if n < 1 || n > 65535 {
		return 0, fmt.Errorf("port %d out of range 1-65535", n)
	}
	return n, nil
}
