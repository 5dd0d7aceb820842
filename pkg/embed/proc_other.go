//go:build !linux

package embed

func killGroup(pgid int) {}
