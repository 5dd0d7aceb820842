package server

import (
	"log"
	"strings"

	"github.com/rs/zerolog"
)

// zerologStd adapts zerolog to the *log.Logger mcp-go wants.
func zerologStd(l zerolog.Logger) *log.Logger {
	return log.New(zwriter{l}, "", 0)
}

type zwriter struct{ l zerolog.Logger }

func (w zwriter) Write(p []byte) (int, error) {
	w.l.Warn().Str("component", "mcp").Msg(strings.TrimSpace(string(p)))
	return len(p), nil
}
