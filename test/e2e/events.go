package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// eventCounts is one reading of every Event in the cluster: how often each was seen, by UID, and what it is.
type eventCounts struct {
	seen  map[types.UID]int32
	about map[types.UID]string // reporting component, reason, involved kind
}

func readEvents(ctx context.Context) (eventCounts, error) {
	list, err := env.Cluster.Typed.CoreV1().Events("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return eventCounts{}, err
	}
	out := eventCounts{seen: map[types.UID]int32{}, about: map[types.UID]string{}}
	for _, e := range list.Items {
		out.seen[e.UID] = timesSeen(e)
		out.about[e.UID] = fmt.Sprintf("%s %s %s", reporter(e), e.Reason, e.InvolvedObject.Kind)
	}
	return out, nil
}

// since is how many times each kind of event was recorded between an earlier reading and this one: new
// events, and repeats of old ones (Kubernetes counts a repeated event on the one it already has).
func (c eventCounts) since(earlier eventCounts) counterSet {
	out := counterSet{}
	for uid, n := range c.seen {
		if d := n - earlier.seen[uid]; d > 0 {
			out[c.about[uid]] += float64(d)
		}
	}
	return out
}

func timesSeen(e corev1.Event) int32 {
	if e.Series != nil {
		return e.Series.Count
	}
	return max(e.Count, 1)
}

func reporter(e corev1.Event) string {
	if e.ReportingController != "" {
		return e.ReportingController
	}
	return e.Source.Component
}

// warningsAboutT lists the messages of the Warning events about an object that contain text.
func warningsAboutT(t *testing.T, kind, name, text string) []string {
	t.Helper()
	list, err := env.Cluster.Typed.CoreV1().Events("").List(t.Context(), metav1.ListOptions{
		FieldSelector: "involvedObject.kind=" + kind + ",involvedObject.name=" + name + ",type=Warning",
	})
	if err != nil {
		t.Fatalf("cannot list the events of %s %s: %v", kind, name, err)
	}
	var out []string
	for _, e := range list.Items {
		if strings.Contains(e.Message, text) {
			out = append(out, e.Message)
		}
	}
	return out
}
