// Package proctree finds, measures and kills the process tree of a server
// started by a harness (cmd/mcpbench, cmd/mcpload): every process whose
// environment carries a marker KEY=value, and all their descendants.
//
// The marker is inherited by the driver, the browser and its helpers, even
// the ones that detach (setsid) or are reparented to init; Chromium's zygote
// starts renderers with a scrubbed environment, so those are found by
// parentage. WithArg finds processes by one argument of their command line
// instead (package session: a browser by its --user-data-dir). On Linux it
// reads /proc; elsewhere it finds nothing and kills
// nothing, and Own is a no-op.
package proctree
