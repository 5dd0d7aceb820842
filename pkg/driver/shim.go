package driver

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// versionShim returns a wrapper around Node.js that answers playwright-go's
// start-up check (`node cli.js --version`, ~0.6 s of Node start-up on every
// Run) from the driver's package.json, which it has just read, and runs the
// real node for everything else. It returns "" where it does not apply (an
// external PLAYWRIGHT_CLI_PATH, Windows, or a package.json of another
// version — then the real check runs and reports the mismatch).
func versionShim(o Options) (string, error) {
	if runtime.GOOS == "windows" || os.Getenv("PLAYWRIGHT_CLI_PATH") != "" || o.NodePath == "" {
		return "", nil
	}
	b, err := os.ReadFile(filepath.Join(o.Dir, "package", "package.json"))
	if err != nil {
		return "", err
	}
	var pkg struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	if err := json.Unmarshal(b, &pkg); err != nil || pkg.Name != "playwright-core" || pkg.Version != PlaywrightVersion {
		return "", nil
	}
	script := fmt.Sprintf("#!/bin/sh\n# Written by cloakbrowser-mcp: answers the driver version check from package.json (playwright-core %s), runs node otherwise.\n"+
		"if [ \"$#\" -eq 2 ] && [ \"$2\" = \"--version\" ]; then echo \"Version %s\"; exit 0; fi\nexec %s \"$@\"\n",
		PlaywrightVersion, PlaywrightVersion, shellQuote(o.NodePath))
	sum := sha256.Sum256([]byte(script))
	path := filepath.Join(o.Dir, "node-"+hex.EncodeToString(sum[:6]))
	if cur, err := os.ReadFile(path); err == nil && string(cur) == script {
		return path, nil
	}
	tmp, err := os.CreateTemp(o.Dir, ".node-shim-")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(script); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Chmod(0o755); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", err
	}
	return path, nil
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
