package server

import (
	"fmt"
	"path/filepath"

	"github.com/cloakmcp/cloakbrowser-mcp/pkg/driver"
)

// linkFFmpeg finds the ffmpeg video is recorded with (--ffmpeg-path, else
// ffmpeg on PATH) and links it for the driver (pkg/driver: Playwright
// looks for it only in its registry). No ffmpeg is not an error: the video
// tools answer that it is needed, and the server serves the rest. It is
// one when the configuration records video from the start
// (contextOptions.recordVideo), which could not record a single page.
func (s *Server) linkFFmpeg() error {
	p, err := driver.FindFFmpeg(s.cfg.FFmpegPath)
	if err == nil {
		err = s.drv.SetFFmpeg(p)
	}
	s.ffmpegErr = err
	if err != nil {
		s.log.Debug().Err(err).Msg("no video recording")
	} else {
		s.log.Debug().Str("ffmpeg", p).Msg("video recording available")
	}
	rv := s.cfg.Context.RecordVideo
	if rv == nil {
		return nil
	}
	if err != nil {
		return fmt.Errorf("browser.contextOptions.recordVideo: %w", err)
	}
	dir := filepath.Clean(rv.Dir)
	if filepath.IsAbs(dir) {
		base, aerr := filepath.Abs(s.cfg.OutputDir)
		rel, rerr := filepath.Rel(base, dir)
		if aerr != nil || rerr != nil || !filepath.IsLocal(rel) {
			return fmt.Errorf("browser.contextOptions.recordVideo.dir=%q: must be inside the output directory %s (--output-dir), or relative to it", rv.Dir, base)
		}
		dir = rel
	}
	if dir == "." {
		dir = ""
	}
	s.recordVideoDir = dir
	return nil
}
