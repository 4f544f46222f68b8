package typed

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestComposedDropsStatus(t *testing.T) {
	MustRegister(admissionv1.AddToScheme)
	cd, err := Composed(&admissionv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "p"}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
		"metadata": map[string]any{"name": "b"}, "spec": map[string]any{"policyName": "p"},
	}
	if diff := cmp.Diff(want, cd.Object); diff != "" {
		t.Errorf("Composed(...): -want, +got:\n%s", diff)
	}

	if _, err := Composed(&corev1.ConfigMap{}); err == nil {
		t.Errorf("Composed(...) of a type missing from the scheme: want an error")
	}
}
