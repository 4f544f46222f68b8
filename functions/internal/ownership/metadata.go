package ownership

import (
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kiso-dev/kiso/functions/internal/placement"
)

// ObjectMeta names a composed object and labels it as kiso's, with labels
// besides. For kinds whose AWS identifier is a name kiso chooses,
// externalName sets it: the Kubernetes name must be DNS-1123, the AWS name
// need not be.
func ObjectMeta(name, externalName string, labels map[string]string) metav1.ObjectMeta {
	l := make(map[string]string, len(labels)+1)
	maps.Copy(l, labels)
	l[placement.ManagedByLabel] = placement.ManagedByValue
	m := metav1.ObjectMeta{Name: name, Labels: l}
	if externalName != "" {
		meta.SetExternalName(&m, externalName)
	}
	return m
}
