package server

import (
	"os"
	"time"

	"github.com/rs/zerolog"

	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

// sweepStale removes what servers of ours that died without closing (a
// SIGKILL, the OOM killer) left in the temp dir: their browser profiles,
// their driver's private TMPDIR, and any process still using them. It runs
// before this server makes its own, and is quick when nothing is stale.
func sweepStale(log zerolog.Logger) {
	start := time.Now()
	removed, err := session.SweepStale(os.TempDir(), log)
	if len(removed) > 0 {
		log.Info().Strs("removed", removed).Int64("ms", time.Since(start).Milliseconds()).
			Msg("removed what dead servers left in the temp dir")
	}
	if err != nil {
		log.Warn().Err(err).Msg("sweep of the temp dir incomplete")
	}
}
