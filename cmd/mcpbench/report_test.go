package main

import (
	"errors"
	"strings"
	"testing"
)

func TestMedian(t *testing.T) {
	cases := []struct {
		name string
		in   []float64
		want float64
		ok   bool
	}{
		{"empty", nil, 0, false},
		{"one", []float64{4}, 4, true},
		{"odd unsorted", []float64{9, 1, 5}, 5, true},
		{"even takes the mean of the middle two", []float64{4, 1, 3, 2}, 2.5, true},
		{"duplicates", []float64{7, 7, 1, 7}, 7, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := append([]float64(nil), tc.in...)
			got, ok := median(tc.in)
			if got != tc.want || ok != tc.ok {
				t.Fatalf("median(%v) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
			}
			for i := range in {
				if in[i] != tc.in[i] {
					t.Fatalf("median reordered its input: %v", tc.in)
				}
			}
		})
	}
}

func ptr(v float64) *float64 { return &v }

func TestRatioAndStatus(t *testing.T) {
	cases := []struct {
		name       string
		ours, up   *float64
		goal       float64
		wantRatio  string
		wantStatus string
	}{
		{"pass at the goal", ptr(25), ptr(100), 0.25, "0.25", "pass"},
		{"miss above the goal", ptr(26), ptr(100), 0.25, "0.26", "miss"},
		{"small ratios get three decimals", ptr(3), ptr(100), 0.10, "0.030", "pass"},
		{"no goal is info", ptr(5), ptr(10), 0, "0.50", "info"},
		{"ours missing", nil, ptr(10), 1, "n/a", "n/a"},
		{"upstream missing", ptr(10), nil, 1, "n/a", "n/a"},
		{"upstream zero", ptr(10), ptr(0), 1, "n/a", "n/a"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := ratio(tc.ours, tc.up)
			if got := formatRatio(r); got != tc.wantRatio {
				t.Errorf("ratio = %s, want %s", got, tc.wantRatio)
			}
			if got := status(r, tc.goal); got != tc.wantStatus {
				t.Errorf("status = %s, want %s", got, tc.wantStatus)
			}
		})
	}
}

func TestFormatValue(t *testing.T) {
	cases := []struct {
		name string
		m    measure
		unit string
		want string
	}{
		{"no value", measure{}, "ms", "n/a"},
		{"small ms keep a decimal", measure{Median: ptr(27.64)}, "ms", "27.6 ms"},
		{"large ms are whole", measure{Median: ptr(2260.4)}, "ms", "2260 ms"},
		{"MiB", measure{Median: ptr(167.25)}, "MiB", "167 MiB"},
		{"chars are whole", measure{Median: ptr(2225)}, "chars", "2225"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := formatValue(tc.m, tc.unit); got != tc.want {
				t.Fatalf("formatValue = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestBuildRowsAndPrintTable(t *testing.T) {
	ours, up := newResults(), newResults()
	specs := []rowSpec{
		spec("spawn → initialize", "ms", 0.10),
		spec("click (form)", "ms", 0.25),
		spec("snapshot size", "chars", 0),
	}
	for _, v := range []float64{30, 20, 25} {
		ours.add("spawn → initialize", v)
	}
	up.add("spawn → initialize", 500)
	ours.fail("click (form)", errors.New("browser_click: tool not offered by this server"))
	up.add("click (form)", 600)
	ours.add("snapshot size", 900)
	up.add("snapshot size", 1000)
	up.note("snapshot size", "snapshot is in a linked file")

	rows := buildRows(specs, ours, up)
	if got := []string{rows[0].Status, rows[1].Status, rows[2].Status}; strings.Join(got, ",") != "pass,n/a,info" {
		t.Fatalf("statuses = %v", got)
	}
	if *rows[0].Ours.Median != 25 {
		t.Fatalf("median of ours = %v, want 25", *rows[0].Ours.Median)
	}
	var b strings.Builder
	if err := printTable(&b, rows); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"spawn → initialize | 25.0 ms |   500 ms | 0.050 | ≤0.10 |   pass",
		"click (form)       |     n/a |   600 ms |   n/a | ≤0.25 |    n/a",
		"click (form), ours: browser_click: tool not offered",
		"snapshot size, upstream: snapshot is in a linked file",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if w := len([]rune(lines[0])); w != len([]rune(lines[1])) || w != len([]rune(lines[2])) {
		t.Errorf("columns not aligned:\n%s", out)
	}
}

func TestRowSpecsGoals(t *testing.T) {
	goals := map[string]float64{}
	for _, s := range rowSpecs() {
		if _, dup := goals[s.Key]; dup {
			t.Fatalf("duplicate row %q", s.Key)
		}
		goals[s.Key] = s.Goal
	}
	for key, want := range map[string]float64{
		"spawn → initialize":                0.10,
		"first navigate, cold process":      1.0,
		"spawn → first page":                0.60,
		"first navigate, after 2 s idle":    0.25,
		"click (form)":                      0.15,
		"type (form)":                       0.8,
		"snapshot frames":                   0.8,
		"snapshot table":                    0.8,
		"snapshot table, repeated":          0.2,
		"act-and-observe form":              0.30,
		"act-and-observe spa":               0.30,
		"act-and-observe shop (large page)": 0.05,
		"memory without browser (RSS)":      0.75,
	} {
		if goals[key] != want {
			t.Errorf("goal of %q = %v, want %v (issues 8, 16, 28)", key, goals[key], want)
		}
	}
}

func TestAbsoluteGoal(t *testing.T) {
	ours, up := newResults(), newResults()
	ours.add("stalled", 400)
	up.add("stalled", 30000)
	ours.add("slow", 900)
	up.add("slow", 30000)
	rows := buildRows([]rowSpec{{Key: "stalled", Unit: "ms", GoalMs: 500}, {Key: "slow", Unit: "ms", GoalMs: 500}, {Key: "none", Unit: "ms", GoalMs: 500}}, ours, up)
	for i, want := range []string{"pass", "miss", "n/a"} {
		if rows[i].Status != want {
			t.Errorf("%s: status %q, want %q", rows[i].Name, rows[i].Status, want)
		}
	}
	var b strings.Builder
	if err := printTable(&b, rows); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "≤0.5 s") {
		t.Errorf("table lacks the goal ≤0.5 s:\n%s", b.String())
	}
}
