package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// Environment variables by which the harness hands its run to a copy of itself in a network namespace.
const (
	// inNamespaceEnv marks the copy of the test binary that runs inside the network namespace.
	inNamespaceEnv = "KISO_E2E_IN_NETNS"
	// preparedEnv names the JSON file in which the parent left what it prepared.
	preparedEnv = "KISO_E2E_PREPARED"
	// namespaceModeEnv set to "off" runs on the host's 127.0.0.1 instead of a network namespace.
	namespaceModeEnv = "KISO_E2E_NETNS"
)

// errNoNetworkNamespace means this process may create neither a network namespace (which needs
// CAP_SYS_ADMIN) nor a user namespace to hold one.
var errNoNetworkNamespace = errors.New("cannot create a network namespace")

// runInNetworkNamespace re-runs this test binary, with the same arguments, in a new network namespace, and
// returns its exit code. Everything the run starts binds to loopback inside that namespace, so nothing it
// starts is reachable from, or can reach, the host's network; the namespace goes away with its last process.
func runInNetworkNamespace(preparedFile string) (int, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, fmt.Errorf("cannot find the test binary: %w", err)
	}
	start := func(attr *syscall.SysProcAttr) (*exec.Cmd, error) {
		cmd := exec.Command(self, os.Args[1:]...)
		cmd.Env = append(os.Environ(), inNamespaceEnv+"=1", preparedEnv+"="+preparedFile)
		cmd.Stdin = os.Stdin
		cmd.Stdout = os.Stdout
		cmd.Stderr = os.Stderr
		cmd.SysProcAttr = attr
		return cmd, cmd.Start()
	}
	// As root (or with CAP_SYS_ADMIN), a network namespace alone; as anyone else, a user namespace in which
	// this user is root, and the network namespace in it: no privilege is needed where the kernel allows
	// unprivileged user namespaces, as CI runners do.
	cmd, err := start(&syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET, Pdeathsig: syscall.SIGKILL})
	if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) {
		cmd, err = start(&syscall.SysProcAttr{
			Cloneflags:                 syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET,
			UidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
			GidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
			GidMappingsEnableSetgroups: false,
			Pdeathsig:                  syscall.SIGKILL,
		})
	}
	if err != nil {
		if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSPC) {
			return 0, fmt.Errorf("%w: %w", errNoNetworkNamespace, err)
		}
		return 0, fmt.Errorf("cannot start the test binary in a network namespace: %w", err)
	}
	// Ctrl-C reaches the copy too (same process group): it stops what it started and exits, which this process
	// must outlive, since the copy dies with it (Pdeathsig). A SIGTERM sent to this process alone is passed on.
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(signals)
	go func() {
		for sig := range signals {
			if sig == syscall.SIGTERM {
				_ = cmd.Process.Signal(sig)
			}
		}
	}()
	err = cmd.Wait()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		return exitErr.ExitCode(), nil
	}
	if err != nil {
		return 0, fmt.Errorf("cannot run the test binary in a network namespace: %w", err)
	}
	return 0, nil
}

// bringUpLoopback sets the namespace's lo interface up; a new network namespace starts with it down.
func bringUpLoopback() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("cannot open a socket to configure lo: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return fmt.Errorf("cannot name interface lo: %w", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("cannot read the flags of lo: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("cannot set lo up: %w", err)
	}
	return nil
}
