package fnstate

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"
)

// nodePool is what a function renders, and the observed object it is compared with: the same content, with
// what the API server and Crossplane add.
const (
	renderedNodePool = `{"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
		"metadata": {"name": "kiso-acme", "labels": {"kiso.dev/organization": "acme"}},
		"spec": {"weight": 10, "limits": {"cpu": "100"}, "template": {"spec": {"taints": [{"key": "kiso.dev/organization", "value": "acme", "effect": "NoSchedule"}]}}}}`
	observedNodePoolStruct = `{"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
		"metadata": {"name": "kiso-acme", "uid": "u", "resourceVersion": "7", "labels": {"kiso.dev/organization": "acme", "crossplane.io/composite": "acme-x"}},
		"spec": {"weight": 10, "limits": {"cpu": "100"}, "template": {"spec": {"taints": [{"key": "kiso.dev/organization", "value": "acme", "effect": "NoSchedule"}]}}},
		"status": {"conditions": [{"type": "Ready", "status": "True"}]}}`
)

func object(t *testing.T, j string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(j), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func mustStruct(t *testing.T, j string) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(object(t, j))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestFromMapIsWhatNewStructMakes(t *testing.T) {
	cases := map[string]struct {
		reason string
		m      map[string]any
		like   string
	}{
		"NoLike":           {reason: "with nothing to share, the result is structpb's own", m: object(t, renderedNodePool)},
		"Observed":         {reason: "what the API server and Crossplane add is not returned", m: object(t, renderedNodePool), like: observedNodePoolStruct},
		"Equal":            {reason: "an object equal to like is like", m: object(t, renderedNodePool), like: renderedNodePool},
		"ScalarChanged":    {reason: "a changed scalar is the rendered one", m: object(t, `{"spec": {"weight": 20, "x": "a"}}`), like: `{"spec": {"weight": 10, "x": "a"}}`},
		"KindChanged":      {reason: "a string where like has a number is a string", m: object(t, `{"spec": {"weight": "10"}}`), like: `{"spec": {"weight": 10}}`},
		"ListLonger":       {reason: "items beyond like's are new", m: object(t, `{"l": [1, 2, 3]}`), like: `{"l": [1, 2]}`},
		"ListShorter":      {reason: "like's extra items are not returned", m: object(t, `{"l": [1]}`), like: `{"l": [1, 2]}`},
		"FieldGone":        {reason: "a field like has and the rendered object not is not returned", m: object(t, `{"a": {"b": 1}}`), like: `{"a": {"b": 1, "c": 2}}`},
		"NullAndEmpty":     {reason: "null, an empty object and an empty list are three things", m: object(t, `{"a": null, "b": {}, "c": []}`), like: `{"a": {}, "b": [], "c": null}`},
		"BoolAgainstNull":  {reason: "false is not null", m: object(t, `{"a": false}`), like: `{"a": null}`},
		"IntegersRendered": {reason: "integers rendered from typed objects are numbers equal to like's", m: map[string]any{"a": int64(10), "b": int(3), "c": int32(-2)}, like: `{"a": 10, "b": 3, "c": -2}`},
		"NegativeZero":     {reason: "-0 is kept as rendered, not shared with like's 0", m: map[string]any{"a": math.Copysign(0, -1)}, like: `{"a": 0}`},
		"OtherTypes":       {reason: "types structpb converts and kiso never shares are converted by structpb", m: map[string]any{"a": []byte("x"), "b": uint8(1), "c": float32(0.5), "d": json.Number("2")}, like: `{"a": "eA==", "b": 1, "c": 0.5, "d": 2}`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			want, err := structpb.NewStruct(tc.m)
			if err != nil {
				t.Fatal(err)
			}
			var like *structpb.Struct
			if tc.like != "" {
				like = mustStruct(t, tc.like)
			}
			got, err := fromMap(tc.m, like)
			if err != nil {
				t.Fatalf("%s: fromMap: %v", tc.reason, err)
			}
			assertSame(t, want, got)
		})
	}
}

// sink keeps what a measured function makes on the heap, as fromMap's result is.
var sink *structpb.Struct

func TestFromMapSharesWhatIsUnchanged(t *testing.T) {
	like := mustStruct(t, observedNodePoolStruct)
	got, err := fromMap(object(t, renderedNodePool), like)
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{"apiVersion", "kind", "spec"} {
		if got.GetFields()[field] != like.GetFields()[field] {
			t.Errorf("%s is equal to the observed one, but was copied", field)
		}
	}
	meta, likeMeta := got.GetFields()["metadata"].GetStructValue().GetFields(), like.GetFields()["metadata"].GetStructValue().GetFields()
	if meta["name"] != likeMeta["name"] {
		t.Error("metadata.name is equal to the observed one, but was copied")
	}
	if meta["labels"] == likeMeta["labels"] {
		t.Error("metadata.labels differ from the observed ones (Crossplane's label), but were shared")
	}

	// An object equal to like costs only its top level: the Struct and its map of fields.
	m, equal := object(t, renderedNodePool), mustStruct(t, renderedNodePool)
	topLevel := testing.AllocsPerRun(10, func() {
		s := &structpb.Struct{Fields: make(map[string]*structpb.Value, len(m))}
		for k, v := range equal.GetFields() {
			s.Fields[k] = v
		}
		sink = s
	})
	if allocs := testing.AllocsPerRun(10, func() { _, _ = fromMap(m, equal) }); allocs > topLevel {
		t.Errorf("fromMap allocated %v times for an object equal to like, its top level %v times; it should share the rest", allocs, topLevel)
	}
}

func TestFromMapRefusesWhatStructpbRefuses(t *testing.T) {
	for name, m := range map[string]map[string]any{
		"InvalidUTF8Key":      {"a\xff": "x"},
		"InvalidUTF8KeyDeep":  {"spec": map[string]any{"a\xff": "x"}},
		"InvalidUTF8Value":    {"spec": []any{"a\xff"}},
		"TypeStructpbRefuses": {"spec": map[string]any{"a": struct{}{}}},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := structpb.NewStruct(m); err == nil {
				t.Fatal("structpb accepts it; the case tests nothing")
			}
			like := mustStruct(t, `{"spec": {"a": "x"}}`)
			if _, err := fromMap(m, like); err == nil {
				t.Error("fromMap accepted what structpb refuses")
			}
		})
	}
}

// Whatever an object and the object it is compared with are, fromMap returns what structpb.NewStruct returns
// (or refuses it likewise), and leaves like as it was. Integral numbers are rendered as int64 when asked, as
// runtime.DefaultUnstructuredConverter renders typed objects.
func FuzzFromMapIsNewStruct(f *testing.F) {
	f.Add(renderedNodePool, observedNodePoolStruct, false)
	f.Add(renderedNodePool, renderedNodePool, true)
	f.Add(`{"a": [1, {"b": null}], "c": -0}`, `{"a": [1, {"b": false}], "c": 0}`, true)
	f.Add(`{"a": {"b": [true]}}`, `{"a": {"b": [true, 1]}}`, false)
	f.Fuzz(func(t *testing.T, object, likeObject string, integers bool) {
		var m, l map[string]any
		if json.Unmarshal([]byte(object), &m) != nil || json.Unmarshal([]byte(likeObject), &l) != nil {
			return
		}
		if integers {
			m = asIntegers(m).(map[string]any)
		}
		like, err := structpb.NewStruct(l)
		if err != nil {
			return
		}
		before := proto.Clone(like)
		want, wantErr := structpb.NewStruct(m)
		got, err := fromMap(m, like)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("structpb.NewStruct error %v, fromMap error %v", wantErr, err)
		}
		if wantErr == nil {
			assertSame(t, want, got)
		}
		if diff := cmp.Diff(before, like, protocmp.Transform()); diff != "" {
			t.Errorf("fromMap changed like: -before, +after:\n%s", diff)
		}
	})
}

// assertSame fails unless got encodes to the bytes want does: protocmp holds -0 equal to 0, its encoding does not.
func assertSame(t *testing.T, want, got *structpb.Struct) {
	t.Helper()
	deterministic := proto.MarshalOptions{Deterministic: true}
	wantBytes, err := deterministic.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	gotBytes, err := deterministic.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(wantBytes, gotBytes) {
		t.Errorf("structpb.NewStruct -, fromMap +:\n%s", cmp.Diff(want, got, protocmp.Transform()))
		t.Errorf("structpb.NewStruct encodes to %x, fromMap to %x", wantBytes, gotBytes)
	}
}

// asIntegers turns every integral number into an int64.
func asIntegers(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = asIntegers(e)
		}
	case []any:
		for i, e := range v {
			v[i] = asIntegers(e)
		}
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 && !math.Signbit(v) {
			return int64(v)
		}
	}
	return v
}
