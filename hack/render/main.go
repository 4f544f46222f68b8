// Command render renders kiso's examples with `crossplane render` against locally built functions, validates the
// output against the real CRD schemas and the XRDs, and compares it with the checked-in goldens.
//
//	go run ./hack/render render [DIR...]              print the rendered output of examples (default: all)
//	go run ./hack/render check                        render and validate every example, diff with its expected.yaml
//	go run ./hack/render golden                       rewrite every examples/<fn>/<scenario>/expected.yaml
//	go run ./hack/render one XR [REQUIRED] [OBSERVED] render and validate your own XR
//	go run ./hack/render upgrade [REV]                render the organization examples of release REV (default: the
//	                                                  newest in CHANGELOG.md) with its own functions, then with this
//	                                                  tree's, its objects observed: no node template changes outside a wave
//
// An example is a folder examples/<fn>/<scenario>/ holding xr.yaml, optional required.yaml (required resources),
// optional observed.yaml (observed composed resources) and expected.yaml (the golden). The Composition whose
// compositeTypeRef is the XR's type renders it, with the functions its pipeline names; those are the
// directories under functions/ whose package metadata gives that name.
//
// Environment:
//
//	KISO_SRC=DIR    source tree holding functions/ package/ compositions/ apis/ examples/ (default: this
//	                repository); lets the driver be exercised against a throwaway tree
//	KISO_NETNS=0    do not isolate the function servers in a loopback-only network namespace
//	KISO_DEBUG=1    start the functions with --debug and show their logs
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/kiso-dev/kiso/internal/layout"
)

const usage = `usage:
  go run ./hack/render render [DIR...]              print the rendered output of examples (default: all)
  go run ./hack/render check                        render and validate every example, diff with its expected.yaml
  go run ./hack/render golden                       rewrite every examples/<fn>/<scenario>/expected.yaml
  go run ./hack/render one XR [REQUIRED] [OBSERVED] render and validate your own XR
  go run ./hack/render upgrade [REV]                render release REV's organization examples, then this tree's upgrade of them
`

// errUsage makes the command print its usage and exit 2.
var errUsage = errors.New("usage")

// errFailed means the failure was already reported on stderr.
var errFailed = errors.New("failed")

func main() {
	// Signals end the run through the context, so the function servers are always stopped.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	interrupted := ctx.Err() != nil
	stop()
	switch {
	case err == nil:
	case errors.Is(err, errUsage):
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	case interrupted:
		os.Exit(130)
	case errors.Is(err, errFailed):
		os.Exit(1)
	default:
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errUsage
	}
	if args[0] == serveCommand {
		// Re-entered inside the network namespace.
		if len(args) != 2 {
			return errUsage
		}
		return serveFromFile(ctx, args[1])
	}
	root, err := layout.Root()
	if err != nil {
		return err
	}
	src := root
	if s := os.Getenv("KISO_SRC"); s != "" {
		if src, err = filepath.Abs(s); err != nil {
			return fmt.Errorf("cannot resolve KISO_SRC: %w", err)
		}
	}
	if args[0] == "upgrade" {
		if len(args) > 2 {
			return errUsage
		}
		rev := ""
		if len(args) == 2 {
			rev = args[1]
		}
		return checkUpgrade(ctx, root, rev)
	}
	m := mode(args[0])
	var sel selection
	switch m {
	case modeRender:
		sel.dirs = args[1:]
	case modeCheck, modeGolden:
		if len(args) != 1 {
			return errUsage
		}
	case modeOne:
		if len(args) < 2 || len(args) > 4 {
			return errUsage
		}
		sel.one = args[1:]
	default:
		return errUsage
	}
	return renderExamples(ctx, root, src, m, sel)
}
