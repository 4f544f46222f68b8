package e2e

import (
	"strings"
)

// Steps of identities and RBAC: namespaces and bindings as a platform writes them, and users who hold only the
// ClusterRoles a scenario gives them.

// userWithClusterRole is a ClusterRole of the rules (each a YAML flow mapping, e.g.
// `{apiGroups: [""], resources: [namespaces], verbs: [get]}`), named after the user, and the binding that gives it
// to the user: the one person of a scenario allowed exactly that much, cluster-wide.
func userWithClusterRole(user string, rules ...string) string {
	return `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: ` + user + `}
rules:
- ` + strings.Join(rules, "\n- ") + `
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: ` + user + `}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: ` + user + `}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: ` + user + `}]
`
}

// namespaceYAML is a namespace as a platform gives it: labelled for organization, or unlabelled if that is "".
func namespaceYAML(name, organization string) string {
	labels := ""
	if organization != "" {
		labels = "\n  labels: {kiso.dev/organization: " + organization + "}"
	}
	return "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: " + name + labels + "\n"
}

// roleBinding binds user to the ClusterRole role in namespace, under the name binding: a tenant admin (admin) or
// editor (edit) as a platform gives its people a namespace.
func roleBinding(namespace, binding, role, user string) string {
	return `apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: ` + binding + `, namespace: ` + namespace + `}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: ` + role + `}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: ` + user + `}]
`
}

// namespaceCreator may create and patch namespaces, as many platforms let teams do.
const namespaceCreator = "e2e-namespace-creator"

const identityPolicy = "kiso-namespace-identity"
