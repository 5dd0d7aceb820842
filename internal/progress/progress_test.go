package progress

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

// clock is a fake time source advanced by the test.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestLines(t *testing.T) {
	cases := []struct {
		name  string
		total int64
		// steps: bytes written after advancing the clock by the duration
		steps []struct {
			after time.Duration
			n     int
		}
		err  error
		want []string
	}{
		{
			name:  "a line per 10% with rate and ETA",
			total: 10_000_000,
			steps: []struct {
				after time.Duration
				n     int
			}{{time.Second, 1_000_000}, {time.Second, 500_000}, {time.Second, 1_500_000}, {7 * time.Second, 7_000_000}},
			want: []string{
				"archive: downloading 10.0 MB",
				"archive: 10% 1.0/10.0 MB, 1.0 MB/s, ETA 9s",
				"archive: 30% 3.0/10.0 MB, 1.0 MB/s, ETA 7s",
				"archive: done, 10.0 MB in 10s",
			},
		},
		{
			name:  "a line every 5 s when the percentage does not move",
			total: 100_000_000,
			steps: []struct {
				after time.Duration
				n     int
			}{{2 * time.Second, 1_000_000}, {3 * time.Second, 1_000_000}, {time.Second, 1_000_000}},
			err: errors.New("connection reset"),
			want: []string{
				"archive: downloading 100.0 MB",
				"archive: 2% 2.0/100.0 MB, 0.4 MB/s, ETA 4m5s",
				"archive: stopped after 3.0 MB in 6s",
			},
		},
		{
			name:  "unknown size",
			total: -1,
			steps: []struct {
				after time.Duration
				n     int
			}{{5 * time.Second, 2_000_000}},
			want: []string{
				"archive: downloading (size unknown)",
				"archive: 2.0 MB, 0.4 MB/s",
				"archive: done, 2.0 MB in 5s",
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			c := &clock{t: time.Unix(1000, 0)}
			r := New(Options{Out: &out, Now: c.now}, "archive", tc.total)
			for _, s := range tc.steps {
				c.t = c.t.Add(s.after)
				if n, err := r.Write(make([]byte, s.n)); n != s.n || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			r.Close(tc.err)
			got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestForTerminalNotATerminal(t *testing.T) {
	var buf bytes.Buffer
	if o := ForTerminal(&buf, func(string) string { return "" }); o.Terminal || o.Color {
		t.Errorf("a buffer is not a terminal: %+v", o)
	}
}
