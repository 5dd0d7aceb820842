//go:build !linux

package main

import (
	"os/exec"
	"time"
)

// The harness reads /proc for memory and cleanup; elsewhere it still runs,
// but memory rows are n/a and stray children are the servers' business.

func setProcAttrs(cmd *exec.Cmd) {}

func markedProcs(kv string) []procInfo { return nil }

func remaining(kv string, before []procInfo) []procInfo { return nil }

func killMarked(kv string, pgid int, before []procInfo, wait time.Duration) []procInfo { return nil }
