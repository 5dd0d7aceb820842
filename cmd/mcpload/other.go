//go:build !linux

// Command mcpload is a load benchmark for the server over Streamable HTTP;
// it reads /proc and runs on Linux only.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "mcpload: Linux only")
	os.Exit(2)
}
