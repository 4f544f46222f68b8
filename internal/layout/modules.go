package layout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	gomodule "golang.org/x/mod/module"
)

// ModuleDir returns where the Go module cache holds module@version, extracted, downloading it through the module
// proxy first if need be. kiso reads CRDs and charts from modules it does not build.
func ModuleDir(ctx context.Context, moduleVersion string) (string, error) {
	// Run outside any module, so the version asked for is the version downloaded and no go.mod is touched.
	outside, err := os.MkdirTemp("", "kiso-module-")
	if err != nil {
		return "", fmt.Errorf("cannot make a folder to download %s from: %w", moduleVersion, err)
	}
	defer os.RemoveAll(outside)
	out, err := goCommand(ctx, outside, "mod", "download", "-json", moduleVersion)
	var info struct {
		Path, Version, Dir, Error string
	}
	if jsonErr := json.Unmarshal(out, &info); jsonErr != nil {
		return "", fmt.Errorf("cannot download module %s: %w", moduleVersion, errors.Join(err, jsonErr))
	}
	if info.Dir != "" {
		return info.Dir, nil
	}
	// A module whose go directive is newer than this Go (Karpenter's) is downloaded and extracted all the
	// same, but reported as an error without its Dir: find it where the module cache keeps it.
	cache, cacheErr := goCommand(ctx, outside, "env", "GOMODCACHE")
	if cacheErr != nil {
		return "", fmt.Errorf("cannot find the module cache: %w", cacheErr)
	}
	escaped, escapeErr := gomodule.EscapePath(info.Path)
	if escapeErr != nil {
		return "", fmt.Errorf("cannot download module %s: %w", moduleVersion, escapeErr)
	}
	dir := filepath.Join(strings.TrimSpace(string(cache)), escaped+"@"+info.Version)
	if _, statErr := os.Stat(dir); statErr != nil {
		return "", fmt.Errorf("cannot download module %s: %s", moduleVersion, info.Error)
	}
	return dir, nil
}

// goCommand runs the go command in dir and returns its standard output.
func goCommand(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
