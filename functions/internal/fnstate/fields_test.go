package fnstate

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composite"
)

type settings struct {
	ClusterName string `json:"clusterName"`
}

type status struct {
	Helm     *settings `json:"helm,omitempty"`
	RoleName string    `json:"roleName,omitempty"`
	Queue    string    `json:"queue,omitempty"`
}

func TestSetStatus(t *testing.T) {
	cases := map[string]struct {
		reason  string
		status  any
		want    map[string]any
		wantErr string
	}{
		"SetsFieldsAndKeepsOthers": {
			reason: "Every field of the status is set; fields it does not name, like conditions, stay.",
			status: status{Helm: &settings{ClusterName: "prod"}, RoleName: "KarpenterNodeRole-prod"},
			want: map[string]any{
				"conditions": []any{map[string]any{"type": "Ready", "status": "False"}},
				"helm":       map[string]any{"clusterName": "prod"},
				"roleName":   "KarpenterNodeRole-prod",
				"queue":      "old",
			},
		},
		"OmittedFieldKeepsItsValue": {
			reason: "An empty omitempty field is not written, so it does not clear what the XR holds.",
			status: status{},
			want: map[string]any{
				"conditions": []any{map[string]any{"type": "Ready", "status": "False"}},
				"queue":      "old",
			},
		},
		"CannotConvert": {
			reason:  "A status with a field JSON cannot hold is an error.",
			status:  struct{ Ch chan int }{Ch: make(chan int)},
			wantErr: "cannot convert status: unrecognized type: chan",
		},
		"NotAStruct": {
			reason:  "A status that is not a struct is an error.",
			status:  "ready",
			wantErr: "cannot convert status: string is not a struct",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			xr := &resource.Composite{Resource: composite.New()}
			xr.Resource.Object = map[string]any{
				"apiVersion": "kiso.dev/v1alpha1", "kind": "XKarpenterCluster",
				"status": map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "False"}}, "queue": "old"},
			}
			err := SetStatus(xr, tc.status)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Fatalf("%s\nerror: -want, +got:\n%s", tc.reason, diff)
			}
			if tc.wantErr != "" {
				return
			}
			if diff := cmp.Diff(tc.want, xr.Resource.Object["status"]); diff != "" {
				t.Errorf("%s\nstatus: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestSetStatusRefusesAStatusThatIsNotAnObject(t *testing.T) {
	xr := &resource.Composite{Resource: composite.New()}
	xr.Resource.Object = map[string]any{"apiVersion": "kiso.dev/v1alpha1", "kind": "XKarpenterCluster", "status": "ready"}
	err := SetStatus(xr, status{RoleName: "KarpenterNodeRole-prod"})
	if diff := cmp.Diff("cannot set status: the XR's status is not an object", fmt.Sprint(err)); diff != "" {
		t.Errorf("SetStatus(...): -want, +got:\n%s", diff)
	}
}

func TestDecode(t *testing.T) {
	type spec struct {
		Name  string `json:"name"`
		Count int    `json:"count"`
	}
	object := map[string]any{"spec": map[string]any{"name": "acme", "count": int64(3)}}
	got := spec{}
	if err := Decode(object, "spec", &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(spec{Name: "acme", Count: 3}, got); diff != "" {
		t.Errorf("Decode(spec): -want, +got:\n%s", diff)
	}
	kept := spec{Name: "unchanged"}
	if err := Decode(object, "status", &kept); err != nil || kept.Name != "unchanged" {
		t.Errorf("Decode(missing field): want no error and nothing changed, got %v, %+v", err, kept)
	}
	if err := Decode(map[string]any{"spec": "not an object"}, "spec", &got); err == nil {
		t.Errorf("Decode(wrong type): want an error")
	}
}

func TestDecodeNamesTheField(t *testing.T) {
	type stack struct {
		Name string `json:"name"`
	}
	type spec struct {
		Tags   map[string]string `json:"tags"`
		Stacks []stack           `json:"stacks"`
		Weight *int32            `json:"weight"`
	}
	cases := map[string]struct {
		value any
		want  string
	}{
		"NotAnObject":    {value: "acme", want: `spec: Invalid value: "string": must be an object`},
		"TagNotAString":  {value: map[string]any{"tags": map[string]any{"team": 7.0}}, want: `spec.tags: Invalid value: "number": must be a string`},
		"StacksNotAList": {value: map[string]any{"stacks": "web"}, want: `spec.stacks: Invalid value: "string": must be a list`},
		"StackNameNotAString": {
			value: map[string]any{"stacks": []any{map[string]any{"name": true}}},
			want:  `spec.stacks.name: Invalid value: "bool": must be a string`,
		},
		"WeightOutOfRange": {value: map[string]any{"weight": 1e300}, want: `spec.weight: Invalid value: "number 1e+300": must be an integer that fits int32`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := Decode(map[string]any{"spec": tc.value}, "spec", &spec{})
			if err == nil || err.Error() != tc.want {
				t.Errorf("Decode(...):\nwant: %s\ngot:  %v", tc.want, err)
			}
		})
	}
}
