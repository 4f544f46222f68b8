package layout

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Root walks up from the working directory to the repository root, the directory holding hack/build-tool.sh,
// so a tool or test runs from any folder of the checkout.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("cannot get the working directory: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "hack", "build-tool.sh")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("cannot find the repository root (a directory with hack/build-tool.sh) above the working directory")
		}
		dir = parent
	}
}

// ToolVersion is VERSION in tools/<tool>/build.env, the one place a tool's version is set.
func ToolVersion(root, tool string) (string, error) {
	vars, err := shellVars(filepath.Join(root, "tools", tool, "build.env"))
	if err != nil {
		return "", err
	}
	if vars["VERSION"] == "" {
		return "", fmt.Errorf("tools/%s/build.env sets no VERSION", tool)
	}
	return vars["VERSION"], nil
}

// A CRDSource is a Go module shipping CRDs of kinds kiso composes or reads, as hack/crds.env lists it.
type CRDSource struct {
	// Module and Version name the Go module.
	Module, Version string
	// Files are the CRD files taken from it, relative to the module's root.
	Files []string
}

// ModuleVersion is module@version, as go mod download takes it.
func (s CRDSource) ModuleVersion() string { return s.Module + "@" + s.Version }

// CRDSources reads hack/crds.env: for each NAME, NAME_MODULE, NAME_VERSION and NAME_CRDS.
func CRDSources(root string) (map[string]CRDSource, error) {
	vars, err := shellVars(filepath.Join(root, "hack", "crds.env"))
	if err != nil {
		return nil, err
	}
	sources := map[string]CRDSource{}
	for key, module := range vars {
		name, ok := strings.CutSuffix(key, "_MODULE")
		if !ok {
			continue
		}
		s := CRDSource{Module: module, Version: vars[name+"_VERSION"], Files: strings.Fields(vars[name+"_CRDS"])}
		if s.Module == "" || s.Version == "" || len(s.Files) == 0 {
			return nil, fmt.Errorf("hack/crds.env: %s needs %s_MODULE, %s_VERSION and %s_CRDS", name, name, name, name)
		}
		sources[name] = s
	}
	return sources, nil
}

// shellAssignment is NAME=value or NAME="value" at the start of a line; a quoted value may span lines.
var shellAssignment = regexp.MustCompile(`(?m)^([A-Z_]+)=(?:"([^"]*)"|'([^']*)'|(\S*))`)

// shellVars reads the assignments of a file in shell syntax (hack/crds.env, tools/*/build.env) without running
// it: values are taken literally, which is all these files need, since the shell scripts source them too.
func shellVars(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", path, err)
	}
	vars := map[string]string{}
	for _, m := range shellAssignment.FindAllStringSubmatch(string(data), -1) {
		vars[m[1]] = m[2] + m[3] + m[4]
	}
	return vars, nil
}
