package driver

import (
	"errors"
	"testing"
)

func TestFFmpegRevision(t *testing.T) {
	for _, tc := range []struct {
		name, json, want string
		err              bool
	}{
		{name: "pinned", json: `{"browsers":[{"name":"chromium","revision":"1248"},{"name":"ffmpeg","revision":"1013"}]}`, want: "1013"},
		{name: "no entry", json: `{"browsers":[{"name":"chromium","revision":"1248"}]}`, err: true},
		{name: "path in revision", json: `{"browsers":[{"name":"ffmpeg","revision":"../x"}]}`, err: true},
		{name: "not json", json: `{`, err: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FFmpegRevision([]byte(tc.json))
			if (err != nil) != tc.err || got != tc.want {
				t.Fatalf("FFmpegRevision = %q, %v; want %q (error %v)", got, err, tc.want, tc.err)
			}
		})
	}
}

func TestFindFFmpegNamedMissing(t *testing.T) {
	_, err := FindFFmpeg("/nonexistent/ffmpeg")
	if !errors.Is(err, ErrNoFFmpeg) {
		t.Fatalf("FindFFmpeg(/nonexistent/ffmpeg) = %v; want ErrNoFFmpeg", err)
	}
}
