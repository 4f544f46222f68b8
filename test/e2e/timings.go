package e2e

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// timings collects what scenarios measure of the real components (how long Karpenter takes to make pools
// Ready, a pod to land, a claim's nodes to go), so that every run prints them together.
type timings struct {
	mu      sync.Mutex
	entries []string
}

// Record notes one measurement and prints it at once.
func (t *timings) Record(what string, d time.Duration) {
	line := fmt.Sprintf("%-58s %6.1fs", what, d.Seconds())
	fmt.Printf("e2e: timing: %s\n", line)
	t.mu.Lock()
	t.entries = append(t.entries, line)
	t.mu.Unlock()
}

func (t *timings) print(w io.Writer) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, line := range t.entries {
		fmt.Fprintf(w, "e2e: timing: %s\n", line)
	}
}
