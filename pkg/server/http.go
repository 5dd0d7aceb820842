package server

import (
	"context"
	"errors"
)

// ServeHTTP serves the Streamable HTTP transport.
func (s *Server) ServeHTTP(ctx context.Context) error {
	return errors.New("streamable-http transport is not available in this build yet")
}
