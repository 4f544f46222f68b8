package process

import (
	"net"
	"os"
	"slices"
	"testing"
)

func TestListeningPortsFindsAPortTheProcessChose(t *testing.T) {
	if _, err := os.Stat("/proc/self/net/tcp"); err != nil {
		t.Skip("no /proc/self/net/tcp")
	}
	l, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	port := l.Addr().(*net.TCPAddr).Port
	ports, err := ListeningPorts(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(ports, port) {
		t.Errorf("ListeningPorts(self) = %v, want it to hold %d, where this process listens", ports, port)
	}
}

func TestListeningReadsOnlyTheListeningSocketsOfTheProcess(t *testing.T) {
	table := `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 111 1 0000000000000000 100 0 0 10 0
   1: 0100007F:1F91 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 222 1 0000000000000000 100 0 0 10 0
   2: 0100007F:1F92 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 333 1 0000000000000000 20 4 30 10 -1
`
	got := listening(table, map[string]bool{"111": true, "333": true})
	if want := []int{8080}; !slices.Equal(got, want) {
		t.Errorf("listening = %v, want %v: 8081 is another process's, 8082 is connected, not listening", got, want)
	}
}
