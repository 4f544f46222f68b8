package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// The identity scenario's organization, its namespaces, and the people who would break its boundary.
const (
	umbraClaimNamespace = "e2e-umbra"
	umbraWeb            = "umbra-web"
	umbraSecond         = "e2e-umbra-second" // given to umbra too: where a second claim of umbra is tried
	malloryNamespace    = "e2e-mallory"      // another organization's, which has no claim yet
	nobodysNamespace    = "e2e-nobody"       // the platform gave it to no organization
	// tenantAdmin holds ClusterRole admin in umbra-web, tenantEditor edit there.
	tenantAdmin  = "e2e-umbra-admin"
	tenantEditor = "e2e-umbra-editor"
	// namespaceFinalizer may only update namespaces/finalize, as a namespace-lifecycle controller does;
	// namespaceStatusWriter may only update and patch namespaces/status.
	namespaceFinalizer    = "e2e-namespace-finalizer"
	namespaceStatusWriter = "e2e-namespace-status-writer"
	// binder is a tenant's ServiceAccount allowed to create pods/binding in its namespace: a scheduler of its own.
	// platformAutomation is the platform's automation that gives namespaces to organizations: in the group
	// examples/rbac/namespace-labeller.yaml binds.
	platformAutomation       = "e2e-platform-automation"
	namespaceLabellers       = "kiso:namespace-labellers"
	namespaceLabellerExample = "examples/rbac/namespace-labeller.yaml"
	binder                   = "binder"
	bindingPolicy            = "kiso-placement-binding"
	// missingGrant is the apiserver's refusal when a namespace the platform gives an organization has no Role.
	missingGrant = "failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"
)

// identityFixtures are the scenario's namespaces and the RBAC the platform gives its people.
var identityFixtures = []byte(`apiVersion: v1
kind: Namespace
metadata:
  name: e2e-umbra
  labels: {kiso.dev/organization: umbra}
---
apiVersion: v1
kind: Namespace
metadata:
  name: umbra-web
  labels: {kiso.dev/organization: umbra}
---
apiVersion: v1
kind: Namespace
metadata:
  name: e2e-umbra-second
  labels: {kiso.dev/organization: umbra}
---
apiVersion: v1
kind: Namespace
metadata:
  name: e2e-mallory
  labels: {kiso.dev/organization: mallory}
---
` + roleBinding("umbra-web", "tenant-admin", "admin", "e2e-umbra-admin") + `---
` + roleBinding("umbra-web", "tenant-editor", "edit", "e2e-umbra-editor") + `---
` + userWithClusterRole(namespaceCreator, `{apiGroups: [""], resources: [namespaces], verbs: [create, get, patch, update, delete]}`) + `---
` + userWithClusterRole(namespaceFinalizer, `{apiGroups: [""], resources: [namespaces], verbs: [get]}`, `{apiGroups: [""], resources: [namespaces/finalize], verbs: [update]}`) + `---
` + userWithClusterRole(namespaceStatusWriter, `{apiGroups: [""], resources: [namespaces], verbs: [get]}`, `{apiGroups: [""], resources: [namespaces/status], verbs: [get, update, patch]}`) + `---
apiVersion: v1
kind: Namespace
metadata:
  name: e2e-nobody
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: binder, namespace: e2e-nobody}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: binder, namespace: e2e-nobody}
rules:
- {apiGroups: [""], resources: [pods, pods/binding, bindings], verbs: [create, get]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: binder, namespace: e2e-nobody}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: binder}
subjects: [{kind: ServiceAccount, name: binder, namespace: e2e-nobody}]
`)

// NamespaceKind is a namespace, read unstructured to be written back whole.
var NamespaceKind = schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}

// umbraPools is the pools policy's refusal of a pod of umbra-web that selects no pool.
const umbraPools = "pods in namespace umbra-web run on pool kiso-umbra: add nodeSelector " + nodeOrganizationKey + "=umbra (or a required node affinity on them) and tolerations kiso.dev/organization=umbra:NoSchedule"

// umbra is the organization whose boundary the scenario tries, with one shared pool.
var umbra = tenant{Namespace: umbraClaimNamespace, Name: "umbra", Organization: "umbra", Isolation: "organization", Stacks: []string{"web"}}

// tolerateUmbra is the toleration umbra's pods carry.
var tolerateUmbra = corev1.Toleration{Key: "kiso.dev/organization", Operator: corev1.TolerationOpEqual, Value: "umbra", Effect: corev1.TaintEffectNoSchedule}

// TestTheBoundaryIsThePlatforms proves on the real apiserver, with the authorizers and admission plugins EKS
// runs, that who may claim an organization, a namespace, a node, an exemption or a pod binding is the
// platform's say: each step is taken with the credentials of whoever would break the boundary (a second
// claim, a tenant admin, a tenant editor, a user who may create namespaces, a tenant's own scheduler, a
// kubelet), and is refused with the message that user reads, while umbra's own pods keep being admitted.
func TestTheBoundaryIsThePlatforms(t *testing.T) {
	sharingPlacementClusterT(t)
	useReferenceObjectsT(t)
	env.ApplyT(t, identityFixtures)
	t.Cleanup(func() { deleteAtCleanup(t, identityFixtures) })
	waitForPlacementInForceT(t)
	env.ApplyT(t, umbra.claimOnly())
	t.Cleanup(func() { deleteAtCleanup(t, umbra.claimOnly()) })
	umbraXR := umbra.xrName(t)
	waitForDefaultServiceAccountT(t, umbraWeb)
	assertClaimConditionT(t, umbra, "PlacementEnforced", "Enforced", "")
	waitForPrintedColumnsT(t, umbra.Namespace, umbra.Name, map[string]string{"ORGANIZATION": "umbra", "ISOLATION": "organization", "POOLS": "kiso-umbra"})
	own := newPod("probe", umbraWeb, selectStack("umbra", ""), tolerateUmbra)
	waitUntilAdmittedT(t, own)

	step(t, "AnOrganizationIsHeldByOneClaimWhateverItsMode", func(t *testing.T) {
		// A second claim of umbra, in stack isolation: its pool names (kiso-umbra.web) are free, the organization is not.
		second := tenant{Namespace: umbraSecond, Name: "umbra-stacks", Organization: "umbra", Isolation: "stack", Stacks: []string{"web"}}
		env.ApplyT(t, second.claimOnly())
		t.Cleanup(func() { deleteAtCleanup(t, second.claimOnly()) })
		// The organization's holder explains the rest (its namespaces' grants are held too): one message.
		assertClaimConditionT(t, second, "NamesAvailable", "NameConflict",
			`spec.organization: Invalid value: "umbra": organization is held by XKarpenterIsolation `+umbraXR+` (claim e2e-umbra/umbra); one claim only holds an organization, whatever its isolation mode`)
		touchXR(t, second.xrName(t))
		if _, err := env.Cluster.Get(t.Context(), NodePoolKind, "", "kiso-umbra.web"); err == nil {
			t.Errorf("the second claim of umbra got a NodePool")
		}
		waitUntilAdmittedT(t, own)
	})

	step(t, "AClaimClaimsOnlyTheOrganizationOfItsNamespace", func(t *testing.T) {
		// A tenant of mallory claims an organization its namespace is not given.
		takeover := tenant{Namespace: malloryNamespace, Name: "initrode", Organization: "initrode", Isolation: "organization", Stacks: []string{"web"},
			Namespaces: map[string][]string{"web": {malloryNamespace}}}
		env.ApplyT(t, takeover.claimOnly())
		t.Cleanup(func() { deleteAtCleanup(t, takeover.claimOnly()) })
		assertClaimConditionT(t, takeover, "SpecValid", "InvalidSpec",
			`spec.organization: Forbidden: the claim's namespace e2e-mallory is not organization "initrode"'s: a claim may claim only the organization the platform labels its namespace with (kiso.dev/organization=initrode)`)
		if pools := env.Cluster.ListT(t, NodePoolKind, "", "kiso.dev/organization=initrode"); len(pools) != 0 {
			t.Errorf("a claim in another organization's namespace got %d NodePools", len(pools))
		}
	})

	step(t, "ANamespaceIsAnOrganizationsOnlyWhenThePlatformSaysSo", func(t *testing.T) {
		for _, label := range []string{"kiso.dev/organization: umbra", `kiso.dev/placement-exempt: "true"`} {
			ns := []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: e2e-grab\n  labels: {" + label + "}\n")
			key, _, _ := strings.Cut(label, ":")
			assertIdentityRefusedT(t, env.TryT(t, ns, "create", "-f", "-", "--as="+namespaceCreator), "e2e-grab", key)
		}
		// Created without them, the namespace cannot be labelled afterwards by its creator, nor is "false" an exemption.
		plain := []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: e2e-grab\n")
		if out := env.TryT(t, plain, "create", "-f", "-", "--as="+namespaceCreator); out.ExitCode != 0 {
			t.Fatalf("the namespace creator cannot create a plain namespace: %s", out.Stderr)
		}
		t.Cleanup(func() { deleteAtCleanup(t, plain) })
		assertIdentityRefusedT(t, env.TryT(t, nil, "label", "namespace", "e2e-grab", "kiso.dev/organization=umbra", "--as="+namespaceCreator), "e2e-grab", "kiso.dev/organization")
		env.TryT(t, nil, "label", "namespace", "e2e-grab", "kiso.dev/placement-exempt=false")
		waitForDefaultServiceAccountT(t, "e2e-grab")
		assertRefusedT(t, newPod("tolerates-everything", "e2e-grab", nil, tolerateEveryone), placementPolicy, everyTaint("e2e-grab"))

		// A claim lists a platform namespace no one gave it (cert-manager): it gets nothing there, the claim
		// says so, and the namespace's pods are left alone.
		certManager := []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: cert-manager\n")
		env.ApplyT(t, certManager)
		t.Cleanup(func() { deleteAtCleanup(t, certManager) })
		patchClaimT(t, umbra, `{"spec":{"stacks":[{"name":"web","namespaces":["umbra-web","cert-manager"]}]}}`)
		t.Cleanup(func() {
			// The test's context is done by now.
			if _, err := env.Kubectl.Run(context.Background(), nil, "patch", "karpenterisolation", umbra.Name, "-n", umbra.Namespace, "--type=merge",
				"-p", `{"spec":{"stacks":[{"name":"web","namespaces":["umbra-web"]}]}}`); err != nil {
				t.Errorf("cannot restore claim %s/%s: %v", umbra.Namespace, umbra.Name, err)
			}
		})
		assertClaimConditionT(t, umbra, "NamespacesAssigned", "NotAssigned",
			"namespaces cert-manager are not labelled kiso.dev/organization=umbra by the platform (or do not exist yet): their pods get no grant to the organization's nodes until the platform labels them")
		for _, kind := range []struct{ gvk, name string }{{"Role", "kiso-placement"}, {"ConfigMap", "kiso-placement"}} {
			gvk := RBACRoleKind
			if kind.gvk == "ConfigMap" {
				gvk = ConfigMapKind
			}
			if _, err := env.Cluster.Get(t.Context(), gvk, "cert-manager", kind.name); err == nil {
				t.Errorf("a claim's listing gave it %s cert-manager/%s", kind.gvk, kind.name)
			}
		}
		waitForDefaultServiceAccountT(t, "cert-manager")
		if out := submitPod(t, newPod("webhook", "cert-manager", nil), true); out.ExitCode != 0 {
			t.Errorf("a pod of cert-manager, which a claim listed, is refused: %s", strings.TrimSpace(out.Stderr))
		}
		assertRefusedT(t, newPod("tolerates-umbra", "cert-manager", nil, tolerateUmbra), placementPolicy,
			"pod in namespace cert-manager tolerates organization umbra's taint (toleration kiso.dev/organization=umbra), but the namespace is not that organization's "+
				"(the platform labels it with no organization): remove the toleration; "+platformHint)
	})

	step(t, "EveryDoorToANamespacesLabelsIsThePlatforms", func(t *testing.T) {
		// The namespace's status and finalize subresources keep the labels a request sends: a user allowed
		// only them (a namespace-lifecycle controller) may do its job, and may not make a namespace exempt.
		exempt := `{"metadata":{"labels":{"kiso.dev/placement-exempt":"true"}}}`
		for _, who := range []struct{ user, subresource string }{{namespaceStatusWriter, "status"}, {namespaceFinalizer, "finalize"}} {
			if can := env.TryT(t, nil, "auth", "can-i", "update", "namespaces", "--subresource="+who.subresource, "--as="+who.user); strings.TrimSpace(can.Stdout) != "yes" {
				t.Errorf("%s may not update namespaces/%s by RBAC (%s): the test would prove nothing", who.user, who.subresource, strings.TrimSpace(can.Stdout))
			}
		}
		assertIdentityRefusedT(t, env.TryT(t, nil, "patch", "namespace", nobodysNamespace, "--subresource=status", "--type=merge", "-p", exempt, "--as="+namespaceStatusWriter),
			nobodysNamespace, "kiso.dev/placement-exempt")
		finalize := func(labels map[string]string) Outcome {
			ns := env.Cluster.GetT(t, NamespaceKind, "", nobodysNamespace)
			ns.SetLabels(labels)
			body, err := ns.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			return env.TryT(t, body, "replace", "--raw", "/api/v1/namespaces/"+nobodysNamespace+"/finalize", "-f", "-", "--as="+namespaceFinalizer)
		}
		current := env.Cluster.GetT(t, NamespaceKind, "", nobodysNamespace).GetLabels()
		withExempt := map[string]string{"kiso.dev/placement-exempt": "true"}
		for k, v := range current {
			withExempt[k] = v
		}
		assertIdentityRefusedT(t, finalize(withExempt), nobodysNamespace, "kiso.dev/placement-exempt")
		// What does not touch identity goes through both doors.
		if out := finalize(current); out.ExitCode != 0 {
			t.Errorf("the finalizer's update that changes no identity label was refused: %s", strings.TrimSpace(out.Stderr))
		}
		if out := env.TryT(t, nil, "patch", "namespace", nobodysNamespace, "--subresource=status", "--type=merge", "-p", `{"metadata":{"labels":{"e2e.kiso.dev/seen":"true"}}}`,
			"--as="+namespaceStatusWriter); out.ExitCode != 0 {
			t.Errorf("the status writer's patch that changes no identity label was refused: %s", strings.TrimSpace(out.Stderr))
		}
		if got := env.Cluster.GetT(t, NamespaceKind, "", nobodysNamespace).GetLabels()["kiso.dev/placement-exempt"]; got != "" {
			t.Errorf("namespace %s carries kiso.dev/placement-exempt=%q, written through a subresource", nobodysNamespace, got)
		}
		// So its pods stay held: one naming a node and tolerating everything is refused.
		assertRefusedT(t, newPod("tolerates-everything", nobodysNamespace, nil, tolerateEveryone), placementPolicy, everyTaint(nobodysNamespace))
	})

	step(t, "ThePlatformsLabellersGiveNamespacesAndNoOneElse", func(t *testing.T) {
		// The platform installs the labellers' role and puts its automation in their group; the automation and a
		// user who may create and patch namespaces act with certificates of their own.
		labellerRole := filepath.Join(env.RepoRoot, filepath.FromSlash(namespaceLabellerExample))
		env.ApplyFileT(t, labellerRole)
		t.Cleanup(func() {
			if _, err := env.Kubectl.Run(context.Background(), nil, "delete", "--ignore-not-found", "-f", labellerRole); err != nil {
				t.Errorf("cannot delete %s: %v", namespaceLabellerExample, err)
			}
		})
		automation := env.UserKubectlT(t, platformAutomation, namespaceLabellers)
		creator := env.UserKubectlT(t, namespaceCreator)
		given := []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: e2e-given\n")
		givenLabelled := []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: e2e-given-labelled\n  labels: {kiso.dev/organization: initech}\n")
		t.Cleanup(func() { deleteAtCleanup(t, append(append(given, "---\n"...), givenLabelled...)) })

		// The automation creates a namespace and gives it to initech (an organization with no claim: no claim of
		// the scenario sees it), in two requests or in one.
		if out := automation.TryT(t, given, "create", "-f", "-"); out.ExitCode != 0 {
			t.Fatalf("the platform's automation cannot create a namespace: %s", strings.TrimSpace(out.Stderr))
		}
		if out := automation.TryT(t, nil, "label", "namespace", "e2e-given", "kiso.dev/organization=initech"); out.ExitCode != 0 {
			t.Fatalf("kiso-namespace-identity refused the platform's automation labelling a namespace: %s", strings.TrimSpace(out.Stderr))
		}
		if got := env.Cluster.GetT(t, NamespaceKind, "", "e2e-given").GetLabels()["kiso.dev/organization"]; got != "initech" {
			t.Errorf("namespace e2e-given is organization %q, want initech", got)
		}
		if out := automation.TryT(t, givenLabelled, "create", "-f", "-"); out.ExitCode != 0 {
			t.Errorf("kiso-namespace-identity refused the platform's automation creating a namespace of initech: %s", strings.TrimSpace(out.Stderr))
		}

		// A user who may create and patch namespaces, with its own credentials, may not move it to another
		// organization, take it from initech, nor create one given to an organization: RBAC alone would let it.
		for _, verb := range []string{"create", "patch"} {
			if can := creator.TryT(t, nil, "auth", "can-i", verb, "namespaces"); strings.TrimSpace(can.Stdout) != "yes" {
				t.Errorf("%s may not %s namespaces by RBAC (%s): the test would prove nothing", namespaceCreator, verb, strings.TrimSpace(can.Stdout))
			}
		}
		assertIdentityRefusedT(t, creator.TryT(t, nil, "label", "namespace", "e2e-given", "kiso.dev/organization=umbra", "--overwrite"), "e2e-given", "kiso.dev/organization")
		assertIdentityRefusedT(t, creator.TryT(t, nil, "label", "namespace", "e2e-given", "kiso.dev/organization-"), "e2e-given", "kiso.dev/organization")
		grab := []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: e2e-grab-labelled\n  labels: {kiso.dev/organization: initech}\n")
		assertIdentityRefusedT(t, creator.TryT(t, grab, "create", "-f", "-"), "e2e-grab-labelled", "kiso.dev/organization")
		if got := env.Cluster.GetT(t, NamespaceKind, "", "e2e-given").GetLabels()["kiso.dev/organization"]; got != "initech" {
			t.Errorf("namespace e2e-given is organization %q after the refusals, want initech", got)
		}
	})

	step(t, "ATenantWhoDeletesOrChangesItsGrantSwitchesNothingOff", func(t *testing.T) {
		// A namespace the platform gives an organization, without its Role (mallory has no claim yet), refuses
		// every pod: a missing grant fails closed.
		waitForDefaultServiceAccountT(t, malloryNamespace)
		for _, pod := range []*corev1.Pod{
			newPod("no-grant", malloryNamespace, nil),
			newPod("no-grant-tolerating", malloryNamespace, selectStack("mallory", ""),
				corev1.Toleration{Key: "kiso.dev/organization", Operator: corev1.TolerationOpEqual, Value: "mallory", Effect: corev1.TaintEffectNoSchedule}),
		} {
			if out := submitPod(t, pod, true); out.ExitCode == 0 || strings.TrimSpace(out.Stderr) != missingGrantRefusal(pod) {
				t.Errorf("pod %s/%s in a namespace without its grant: exit %d\n got %s\nwant %s", pod.Namespace, pod.Name, out.ExitCode, strings.TrimSpace(out.Stderr), missingGrantRefusal(pod))
			}
		}
		role := env.Cluster.GetT(t, RBACRoleKind, umbraWeb, "kiso-placement")
		// The tenant admin may delete the Role: the namespace's pods are then refused, not let through.
		if out := env.TryT(t, nil, "delete", "role", "kiso-placement", "-n", umbraWeb, "--as="+tenantAdmin); out.ExitCode != 0 {
			t.Fatalf("the tenant admin cannot delete its namespace's Role: %s", out.Stderr)
		}
		// Crossplane may have composed it again already: either way the pod is refused, never let through.
		assertRefusedByPoolsT(t, newPod("no-placement", umbraWeb, nil), missingGrant, umbraPools)
		restored := waitForRoleRestoredT(t, umbraWeb, string(role.GetUID()))
		waitUntilAdmittedT(t, own)

		// It may not give its namespace another organization's tolerations: RBAC refuses the escalation.
		grab := `[{"op":"add","path":"/rules/0/resourceNames/-","value":"mallory"}]`
		if out := env.TryT(t, nil, "patch", "role", "kiso-placement", "-n", umbraWeb, "--type=json", "-p", grab, "--as="+tenantAdmin); out.ExitCode == 0 ||
			!strings.Contains(out.Stderr, "is attempting to grant RBAC permissions not currently held") {
			t.Errorf("the tenant admin widened its grant: exit %d %s", out.ExitCode, strings.TrimSpace(out.Stderr))
		}
		// Nor switch its own namespace to Warn, which would turn every refusal of its pods into a warning: RBAC
		// refuses granting warn on its pool, a permission the tenant admin does not hold.
		warn := `[{"op":"add","path":"/rules/-","value":{"apiGroups":["placement.kiso.dev"],"resources":["pools"],"verbs":["warn"],"resourceNames":["umbra"]}}]`
		if out := env.TryT(t, nil, "patch", "role", "kiso-placement", "-n", umbraWeb, "--type=json", "-p", warn, "--as="+tenantAdmin); out.ExitCode == 0 ||
			!strings.Contains(out.Stderr, "is attempting to grant RBAC permissions not currently held") {
			t.Errorf("the tenant admin switched its namespace to Warn: exit %d %s", out.ExitCode, strings.TrimSpace(out.Stderr))
		}
		// It may empty the Role: the pods are refused until Crossplane restores it.
		empty := `[{"op":"replace","path":"/rules","value":[]}]`
		if out := env.TryT(t, nil, "patch", "role", "kiso-placement", "-n", umbraWeb, "--type=json", "-p", empty, "--as="+tenantAdmin); out.ExitCode != 0 {
			t.Fatalf("the tenant admin cannot empty its namespace's Role: %s", out.Stderr)
		}
		assertRefusedByPoolsT(t, newPod("no-placement", umbraWeb, nil),
			"pods in namespace umbra-web are refused: its placement grant (Role kiso-placement) was changed and names no pool; Crossplane restores it at its next reconcile of organization umbra's claim",
			umbraPools)
		env.Cluster.WaitForT(t, policyInForceTimeout, RBACRoleKind, umbraWeb, "kiso-placement", func(u *unstructured.Unstructured) (bool, string) {
			rules, _, _ := unstructured.NestedSlice(u.Object, "rules")
			return len(rules) > 0, "rules still empty"
		})
		waitUntilAdmittedT(t, own)

		// The tenant editor deletes the ConfigMap: Crossplane composes it again, and the grant is never withdrawn.
		configMap := env.Cluster.GetT(t, ConfigMapKind, umbraWeb, "kiso-placement")
		if out := env.TryT(t, nil, "delete", "configmap", "kiso-placement", "-n", umbraWeb, "--as="+tenantEditor); out.ExitCode != 0 {
			t.Fatalf("the tenant editor cannot delete the ConfigMap: %s", out.Stderr)
		}
		env.Cluster.WaitForT(t, policyInForceTimeout, ConfigMapKind, umbraWeb, "kiso-placement", func(u *unstructured.Unstructured) (bool, string) {
			return u.GetUID() != configMap.GetUID(), "not composed again yet"
		})
		touchXR(t, umbraXR)
		if now := env.Cluster.GetT(t, RBACRoleKind, umbraWeb, "kiso-placement"); string(now.GetUID()) != restored || now.GetDeletionTimestamp() != nil {
			t.Errorf("the Role was withdrawn after the tenant editor deleted the ConfigMap (uid %s, was %s)", now.GetUID(), restored)
		}
		waitUntilAdmittedT(t, own)
	})

	step(t, "NothingATenantCreatesStopsThePlatformChangingItsOrganization", func(t *testing.T) {
		// The tenant editor puts its own ConfigMap in the place of kiso's, controlled by its Deployment.
		rogue := []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: rogue, namespace: " + umbraWeb + "}\nspec:\n  replicas: 0\n" +
			"  selector: {matchLabels: {app: rogue}}\n  template:\n    metadata: {labels: {app: rogue}}\n    spec: {containers: [{name: pause, image: registry.k8s.io/pause:3.10}]}\n")
		if out := env.TryT(t, rogue, "create", "-f", "-", "--as="+tenantEditor); out.ExitCode != 0 {
			t.Fatalf("the tenant editor cannot create a Deployment: %s", out.Stderr)
		}
		t.Cleanup(func() { deleteAtCleanup(t, rogue) })
		deployment, err := env.Cluster.Typed.AppsV1().Deployments(umbraWeb).Get(t.Context(), "rogue", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		heldByTenant := func(u *unstructured.Unstructured) bool {
			owner := metav1.GetControllerOf(u)
			return owner != nil && owner.Kind == "Deployment" && owner.Name == "rogue"
		}
		began := time.Now()
		phase := func(what string) { t.Logf("%s after %s", what, time.Since(began).Round(100*time.Millisecond)) }
		// It could delete it and create its own, racing Crossplane, which composes kiso's again at once (each
		// lost race is a burst of events for the XR, and enough of them open Crossplane's circuit breaker for
		// it, five minutes by default). One request ends in the same place: it makes its Deployment the
		// ConfigMap's controller.
		takeover := fmt.Sprintf(`{"metadata":{"ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment","name":"rogue","uid":%q,"controller":true}]},"data":{"owner":"tenant"}}`, deployment.UID)
		if out := env.TryT(t, nil, "patch", "configmap", "kiso-placement", "-n", umbraWeb, "--type=merge", "-p", takeover, "--as="+tenantEditor); out.ExitCode != 0 {
			t.Fatalf("the tenant editor cannot take the ConfigMap: %s", out.Stderr)
		}
		if u := env.Cluster.GetT(t, ConfigMapKind, umbraWeb, "kiso-placement"); !heldByTenant(u) {
			t.Fatalf("the tenant's ConfigMap is not controlled by its Deployment: %v", metav1.GetControllerOf(u))
		}
		t.Cleanup(func() {
			_, _ = env.Kubectl.Run(context.Background(), nil, "delete", "configmap", "kiso-placement", "-n", umbraWeb, "--ignore-not-found")
		})
		// The claim names the object and who controls it, and the organization is not frozen: the platform's
		// switch to Warn reaches the namespace's Role, and back.
		assertClaimConditionT(t, umbra, "NamesAvailable", "NamespaceObjectsHeld",
			"ConfigMap "+umbraWeb+"/kiso-placement is held by Deployment rogue, not composed by this organization: kiso composes it once the name is free")
		phase("the claim names the holder")
		patchClaimT(t, umbra, `{"spec":{"placement":{"mode":"Warn"}}}`)
		t.Cleanup(func() {
			_, _ = env.Kubectl.Run(context.Background(), nil, "patch", "karpenterisolation", umbra.Name, "-n", umbra.Namespace, "--type=merge", "-p", `{"spec":{"placement":{"mode":"Enforce"}}}`)
		})
		env.Cluster.WaitForT(t, policyInForceTimeout, RBACRoleKind, umbraWeb, "kiso-placement", grantsWarn(true))
		phase("the switch to Warn reached the Role")
		patchClaimT(t, umbra, `{"spec":{"placement":{"mode":"Enforce"}}}`)
		env.Cluster.WaitForT(t, policyInForceTimeout, RBACRoleKind, umbraWeb, "kiso-placement", grantsWarn(false))
		phase("the switch back to Enforce reached the Role")
		waitUntilAdmittedT(t, own)
		if u := env.Cluster.GetT(t, ConfigMapKind, umbraWeb, "kiso-placement"); !heldByTenant(u) {
			t.Errorf("the tenant's ConfigMap was taken over: controller %v", metav1.GetControllerOf(u))
		}
		// Once the tenant lets the name go, kiso composes its ConfigMap again and the claim says so.
		if out := env.TryT(t, nil, "delete", "configmap", "kiso-placement", "-n", umbraWeb, "--as="+tenantEditor); out.ExitCode != 0 {
			t.Fatalf("the tenant editor cannot delete its ConfigMap: %s", out.Stderr)
		}
		env.Cluster.WaitForT(t, policyInForceTimeout, ConfigMapKind, umbraWeb, "kiso-placement", func(u *unstructured.Unstructured) (bool, string) {
			owner := metav1.GetControllerOf(u)
			return owner != nil && owner.Name == umbraXR, fmt.Sprintf("controller %v", owner)
		})
		phase("kiso composed its ConfigMap again once the tenant deleted its own")
		assertClaimConditionT(t, umbra, "NamesAvailable", "Available", "")
	})

	step(t, "ATenantAdminWhoTakesItsGrantFreezesNothing", func(t *testing.T) {
		// umbra runs in Warn mode: the Role lets any pod of umbra-web run anywhere of umbra's.
		patchClaimT(t, umbra, `{"spec":{"placement":{"mode":"Warn"}}}`)
		t.Cleanup(func() {
			_, _ = env.Kubectl.Run(context.Background(), nil, "patch", "karpenterisolation", umbra.Name, "-n", umbra.Namespace, "--type=merge", "-p", `{"spec":{"placement":{"mode":"Enforce"}}}`)
		})
		env.Cluster.WaitForT(t, policyInForceTimeout, RBACRoleKind, umbraWeb, "kiso-placement", grantsWarn(true))
		unplaced := newPod("unplaced", umbraWeb, nil)
		waitUntilAdmittedT(t, unplaced)

		// The tenant admin makes its own Deployment the Role's controller: RBAC checks no escalation when only
		// owner references change, so the apiserver lets it, and Crossplane no longer updates the Role.
		rogue := []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: rogue-admin, namespace: " + umbraWeb + "}\nspec:\n  replicas: 0\n" +
			"  selector: {matchLabels: {app: rogue-admin}}\n  template:\n    metadata: {labels: {app: rogue-admin}}\n    spec: {containers: [{name: pause, image: registry.k8s.io/pause:3.10}]}\n")
		if out := env.TryT(t, rogue, "create", "-f", "-", "--as="+tenantAdmin); out.ExitCode != 0 {
			t.Fatalf("the tenant admin cannot create a Deployment: %s", out.Stderr)
		}
		t.Cleanup(func() { deleteAtCleanup(t, rogue) })
		deployment, err := env.Cluster.Typed.AppsV1().Deployments(umbraWeb).Get(t.Context(), "rogue-admin", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		taken := env.Cluster.GetT(t, RBACRoleKind, umbraWeb, "kiso-placement")
		takeover := fmt.Sprintf(`{"metadata":{"ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment","name":"rogue-admin","uid":%q,"controller":true}]}}`, deployment.UID)
		if out := env.TryT(t, nil, "patch", "role", "kiso-placement", "-n", umbraWeb, "--type=merge", "-p", takeover, "--as="+tenantAdmin); out.ExitCode != 0 {
			t.Fatalf("the apiserver no longer lets a tenant admin change its Role's controller (the door this step tries is shut elsewhere): %s", out.Stderr)
		}
		t.Cleanup(func() {
			// Only a Role the step left taken or held: the one Crossplane composed again is the next steps'.
			u, err := env.Cluster.Get(context.Background(), RBACRoleKind, umbraWeb, "kiso-placement")
			if err != nil || u == nil {
				return
			}
			if owner := metav1.GetControllerOf(u); owner != nil && owner.Name == umbraXR && u.GetDeletionTimestamp() == nil {
				return
			}
			_, _ = env.Kubectl.Run(context.Background(), nil, "patch", "role", "kiso-placement", "-n", umbraWeb, "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
			_, _ = env.Kubectl.Run(context.Background(), nil, "delete", "role", "kiso-placement", "-n", umbraWeb, "--ignore-not-found")
		})
		// The Role it took grants nothing: the pods of umbra-web are refused, its own pods included, and the
		// claim says who holds the Role.
		notControlled := "pods in namespace " + umbraWeb + " are refused: its placement grant (Role kiso-placement) is no longer controlled by XKarpenterIsolation " + umbraXR +
			", which composed it, so it grants nothing"
		waitUntilRefusedT(t, unplaced, poolsPolicy)
		assertRefusedT(t, unplaced, poolsPolicy, notControlled)
		assertRefusedT(t, own, poolsPolicy, notControlled)
		assertClaimConditionT(t, umbra, "NamesAvailable", "NamespaceObjectsHeld",
			"Role "+umbraWeb+"/kiso-placement is held by Deployment rogue-admin, not composed by this organization: kiso composes it once the name is free; "+
				"until then the namespace's pods are refused (the policies trust only the Role this organization composes)")

		// The platform switches umbra to Enforce: what the Role still says (Warn) gives nothing.
		patchClaimT(t, umbra, `{"spec":{"placement":{"mode":"Enforce"}}}`)
		waitClaimConditionT(t, umbra.Namespace, umbra.Name, "PlacementEnforced", "False", "GrantsPending")
		if rules := fmt.Sprint(env.Cluster.GetT(t, RBACRoleKind, umbraWeb, "kiso-placement").Object["rules"]); !strings.Contains(rules, "warn") {
			t.Fatalf("the taken Role was updated (rules %s): the step proves nothing", rules)
		}
		assertRefusedT(t, unplaced, poolsPolicy, notControlled)

		// The platform gives umbra-web to another organization: the Role is umbra's, not the namespace's.
		if out := env.TryT(t, nil, "label", "namespace", umbraWeb, "--overwrite", "kiso.dev/organization=mallory"); out.ExitCode != 0 {
			t.Fatalf("cannot give %s to mallory: %s", umbraWeb, out.Stderr)
		}
		t.Cleanup(func() {
			_, _ = env.Kubectl.Run(context.Background(), nil, "label", "namespace", umbraWeb, "--overwrite", "kiso.dev/organization=umbra")
		})
		notTheNamespaces := "pods in namespace " + umbraWeb + " are refused: its placement grant (Role kiso-placement) is organization umbra's, not the namespace's, so it grants nothing"
		waitForT(t, policyInForceTimeout, "the pools policy to read "+umbraWeb+" as mallory's", func(context.Context) (bool, string, error) {
			out := submitPod(t, unplaced, true)
			return strings.TrimSpace(out.Stderr) == refusal(unplaced, poolsPolicy, notTheNamespaces), strings.TrimSpace(out.Stderr), nil
		})
		mallorys := newPod("mallorys", umbraWeb, selectStack("mallory", ""),
			corev1.Toleration{Key: "kiso.dev/organization", Operator: corev1.TolerationOpEqual, Value: "mallory", Effect: corev1.TaintEffectNoSchedule})
		assertRefusedT(t, mallorys, poolsPolicy, notTheNamespaces)

		// A finalizer keeps a Role through its deletion, and with it no grant: a Role being deleted grants nothing.
		if out := env.TryT(t, nil, "label", "namespace", umbraWeb, "--overwrite", "kiso.dev/organization=umbra"); out.ExitCode != 0 {
			t.Fatalf("cannot give %s back to umbra: %s", umbraWeb, out.Stderr)
		}
		finalizer := `{"metadata":{"finalizers":["e2e.kiso.dev/keep"]}}`
		if out := env.TryT(t, nil, "patch", "role", "kiso-placement", "-n", umbraWeb, "--type=merge", "-p", finalizer, "--as="+tenantAdmin); out.ExitCode != 0 {
			t.Fatalf("the tenant admin cannot put a finalizer on its Role: %s", out.Stderr)
		}
		if out := env.TryT(t, nil, "delete", "role", "kiso-placement", "-n", umbraWeb, "--wait=false", "--as="+tenantAdmin); out.ExitCode != 0 {
			t.Fatalf("the tenant admin cannot delete its Role: %s", out.Stderr)
		}
		beingDeleted := "pods in namespace " + umbraWeb + " are refused: its placement grant (Role kiso-placement) is being deleted, so it grants nothing"
		waitForT(t, policyInForceTimeout, "the pools policy to read the Role as being deleted", func(context.Context) (bool, string, error) {
			out := submitPod(t, unplaced, true)
			return strings.TrimSpace(out.Stderr) == refusal(unplaced, poolsPolicy, beingDeleted), strings.TrimSpace(out.Stderr), nil
		})
		assertRefusedT(t, own, poolsPolicy, beingDeleted)

		// Once the tenant lets the Role go, Crossplane composes umbra's again, in Enforce mode.
		if out := env.TryT(t, nil, "patch", "role", "kiso-placement", "-n", umbraWeb, "--type=merge", "-p", `{"metadata":{"finalizers":null}}`, "--as="+tenantAdmin); out.ExitCode != 0 {
			t.Fatalf("the tenant admin cannot remove its finalizer: %s", out.Stderr)
		}
		waitForRoleRestoredT(t, umbraWeb, string(taken.GetUID()))
		env.Cluster.WaitForT(t, policyInForceTimeout, RBACRoleKind, umbraWeb, "kiso-placement", grantsWarn(false))
		waitUntilAdmittedT(t, own)
		assertRefusedByPoolsT(t, unplaced, umbraPools)
		waitClaimConditionT(t, umbra.Namespace, umbra.Name, "PlacementEnforced", "True", "Enforced")
		assertClaimConditionT(t, umbra, "NamesAvailable", "Available", "")
	})

	step(t, "OnlyThePlatformsSchedulersBindPods", func(t *testing.T) {
		waitForDefaultServiceAccountT(t, nobodysNamespace)
		// A pod that tolerates nothing, and selects a label no pool has, so no scheduler binds it.
		pending := newPod("bound-by-hand", nobodysNamespace, map[string]string{"e2e.kiso.dev/unschedulable": "true"})
		createPodT(t, pending)
		t.Cleanup(func() {
			_, _ = env.Kubectl.Run(context.Background(), nil, "delete", "pod", pending.Name, "-n", nobodysNamespace, "--ignore-not-found", "--wait=false")
		})
		user := "system:serviceaccount:" + nobodysNamespace + ":" + binder
		binding := fmt.Sprintf(`{"apiVersion":"v1","kind":"Binding","metadata":{"name":%q},"target":{"kind":"Node","name":%q}}`, pending.Name, someNode)
		out := env.TryT(t, []byte(binding), "create", "--raw", "/api/v1/namespaces/"+nobodysNamespace+"/pods/"+pending.Name+"/binding", "-f", "-", "--as="+user)
		if out.ExitCode == 0 {
			t.Fatalf("a tenant's scheduler bound pod %s/%s to node %s", nobodysNamespace, pending.Name, someNode)
		}
		want := "ValidatingAdmissionPolicy '" + bindingPolicy + "' with binding '" + bindingPolicy + "' denied request: " + user + " may not bind pod " + nobodysNamespace + "/" + pending.Name +
			" to node " + someNode + ": a binding skips the taints that keep organizations apart, so outside platform namespaces only the platform's schedulers (system:kube-scheduler) bind pods; " +
			"the platform grants others create on bindings.placement.kiso.dev"
		if out.ExitCode == 0 || !strings.Contains(out.Stderr, want) {
			t.Errorf("a tenant's scheduler bound a pod to a node: exit %d\n got %s\nwant it to contain %s", out.ExitCode, strings.TrimSpace(out.Stderr), want)
		}
		// The older bindings resource does the same as pods/binding: it is refused alike.
		out = env.TryT(t, []byte(binding), "create", "--raw", "/api/v1/namespaces/"+nobodysNamespace+"/bindings", "-f", "-", "--as="+user)
		if out.ExitCode == 0 || !strings.Contains(out.Stderr, want) {
			t.Errorf("a tenant's scheduler bound a pod to a node through the bindings resource: exit %d\n got %s\nwant it to contain %s", out.ExitCode, strings.TrimSpace(out.Stderr), want)
		}
		if p, err := env.Cluster.Typed.CoreV1().Pods(nobodysNamespace).Get(t.Context(), pending.Name, metav1.GetOptions{}); err != nil {
			t.Errorf("cannot read pod %s/%s: %v", nobodysNamespace, pending.Name, err)
		} else if p.Spec.NodeName != "" {
			t.Errorf("pod %s/%s was bound to node %s though every binding was refused", nobodysNamespace, pending.Name, p.Spec.NodeName)
		}
		// RBAC alone would have let it: the refusal is kiso's.
		for _, resource := range [][]string{{"pods", "--subresource=binding"}, {"bindings"}} {
			if can := env.TryT(t, nil, append([]string{"auth", "can-i", "create", "-n", nobodysNamespace, "--as=" + user}, resource...)...); strings.TrimSpace(can.Stdout) != "yes" {
				t.Errorf("the binder may not create %v by RBAC (%s): the test would prove nothing", resource, strings.TrimSpace(can.Stdout))
			}
		}
	})

	step(t, "NoKubeletGivesItselfAnOrganizationsIdentity", func(t *testing.T) {
		// A kubelet registers its Node with umbra's selection label: NodeRestriction refuses it.
		const rogue = "e2e-rogue"
		asNode := []string{"--as=system:node:" + rogue, "--as-group=system:nodes", "--as-group=system:authenticated"}
		node := func(labels string) []byte {
			return []byte("apiVersion: v1\nkind: Node\nmetadata:\n  name: " + rogue + "\n  labels: {" + labels + "}\n")
		}
		out := env.TryT(t, node(nodeOrganizationKey+": umbra"), append([]string{"create", "--dry-run=server", "-f", "-"}, asNode...)...)
		if want := `node "` + rogue + `" is not allowed to set the following labels: ` + nodeOrganizationKey; out.ExitCode == 0 || !strings.Contains(out.Stderr, want) {
			t.Errorf("a kubelet registered with umbra's node identity: exit %d %s; want %q", out.ExitCode, strings.TrimSpace(out.Stderr), want)
		}
		// The report label kiso.dev/organization it may set (so pods never select it).
		if out := env.TryT(t, node("kiso.dev/organization: umbra"), append([]string{"create", "--dry-run=server", "-f", "-"}, asNode...)...); out.ExitCode != 0 {
			t.Errorf("a kubelet may register with kiso.dev/organization, which is why no pod selects it; refused here: %s", strings.TrimSpace(out.Stderr))
		}
		// Selecting it, or umbra's nodes in any way, is refused outside umbra's namespaces.
		assertRefusedT(t, newPod("selects-umbra", nobodysNamespace, map[string]string{"kiso.dev/organization": "umbra"}), placementPolicy,
			"pod in namespace e2e-nobody selects the nodes of an organization ("+nodeOrganizationKey+" or kiso.dev/organization in its nodeSelector or required node affinity) that the namespace is not "+
				"(the platform labels it with no organization): remove that selector; "+platformHint)
	})

	step(t, "PodsChartsProduceStayWithinCELCost", func(t *testing.T) {
		// The worst case docs/tenancy.md allows: 40 tolerations (umbra's twice, as a chart's default plus the
		// status's, the rest NoExecute), and a required node affinity of 10 terms of 5 expressions, each term
		// selecting umbra's pool.
		pod := newPod("heavy", umbraWeb, nil)
		for i := range 40 {
			tol := tolerateUmbra
			if i >= 2 {
				tol = corev1.Toleration{Key: fmt.Sprintf("example.com/taint-%d", i), Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](60)}
			}
			pod.Spec.Tolerations = append(pod.Spec.Tolerations, tol)
		}
		terms := make([]corev1.NodeSelectorTerm, 0, 10)
		for i := range 10 {
			terms = append(terms, corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{
				{Key: nodeOrganizationKey, Operator: corev1.NodeSelectorOpIn, Values: []string{"umbra"}},
				{Key: "kubernetes.io/arch", Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64", "arm64"}},
				{Key: "topology.kubernetes.io/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{fmt.Sprintf("eu-west-3%c", 'a'+i%3)}},
				{Key: "karpenter.sh/capacity-type", Operator: corev1.NodeSelectorOpIn, Values: []string{"spot", "on-demand"}},
				{Key: "kiso.dev/organization", Operator: corev1.NodeSelectorOpIn, Values: []string{"umbra"}},
			}})
		}
		pod.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms}}}
		if out := submitPod(t, pod, true); out.ExitCode != 0 {
			t.Errorf("umbra's own pod with 40 tolerations and 10 affinity terms is refused: %s", strings.TrimSpace(out.Stderr))
		}
	})
}

// waitForPlacementInForceT waits until the apiserver enforces every placement policy the scenario's cluster
// composes. The previous scenario's cluster may still be going (its policies held names this cluster's take
// over once they are deleted), and the apiserver loads policies a moment after they are written: each policy
// is in force once it refuses what only it refuses.
func waitForPlacementInForceT(t *testing.T) {
	t.Helper()
	for _, name := range []string{placementPolicy, poolsPolicy, bindingPolicy, identityPolicy} {
		env.Cluster.WaitForT(t, policyInForceTimeout, admissionregistrationv1.SchemeGroupVersion.WithKind("ValidatingAdmissionPolicy"), "", name, func(u *unstructured.Unstructured) (bool, string) {
			owner := metav1.GetControllerOf(u)
			return owner != nil && owner.Name == placementCluster && u.GetDeletionTimestamp() == nil, fmt.Sprintf("composed by %v", owner)
		})
		waitForTypeCheckedT(t, name)
	}
	waitForDefaultServiceAccountT(t, malloryNamespace)
	waitForDefaultServiceAccountT(t, nobodysNamespace)
	waitUntilRefusedT(t, newPod("probe", malloryNamespace, nil), poolsPolicy)
	waitUntilRefusedT(t, newPod("probe", nobodysNamespace, nil, tolerateEveryone), placementPolicy)
	labelled := []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: e2e-probe\n  labels: {kiso.dev/organization: umbra}\n")
	waitForT(t, policyInForceTimeout, "policy "+identityPolicy+" to refuse a labelled namespace", func(context.Context) (bool, string, error) {
		out := env.TryT(t, labelled, "create", "--dry-run=server", "-f", "-", "--as="+namespaceCreator)
		return out.ExitCode != 0 && strings.Contains(out.Stderr, identityPolicy), strings.TrimSpace(out.Stderr), nil
	})
}

// patchClaimT changes a claim as its owner would.
func patchClaimT(t *testing.T, tn tenant, patch string) {
	t.Helper()
	if out := env.TryT(t, nil, "patch", "karpenterisolation", tn.Name, "-n", tn.Namespace, "--type=merge", "-p", patch); out.ExitCode != 0 {
		t.Fatalf("cannot patch claim %s/%s: %s", tn.Namespace, tn.Name, out.Stderr)
	}
}

// assertIdentityRefusedT checks that a request setting a namespace's identity label was refused by the
// namespace policy, with the message the user reads.
func assertIdentityRefusedT(t *testing.T, out Outcome, namespace, label string) {
	t.Helper()
	want := "ValidatingAdmissionPolicy '" + identityPolicy + "' with binding '" + identityPolicy + "' denied request: only the platform may set, change or remove " + label +
		" on namespace " + namespace + ": they say which organization the namespace is and whether placement exempts it (the platform holds label on namespaces.placement.kiso.dev)"
	if out.ExitCode == 0 || !strings.Contains(out.Stderr, want) {
		t.Errorf("a namespace's %s was set by someone other than the platform: exit %d\n got %s\nwant it to contain %s", label, out.ExitCode, strings.TrimSpace(out.Stderr), want)
	}
}

// assertRefusedByPoolsT checks that the pools policy refuses a pod with one of the messages: which one
// depends on whether Crossplane has restored the namespace's Role yet, and either refuses.
func assertRefusedByPoolsT(t *testing.T, pod *corev1.Pod, messages ...string) {
	t.Helper()
	out := submitPod(t, pod, true)
	got := strings.TrimSpace(out.Stderr)
	for _, m := range messages {
		if out.ExitCode != 0 && (got == refusal(pod, poolsPolicy, m) || m == missingGrant && got == missingGrantRefusal(pod)) {
			return
		}
	}
	t.Errorf("pod %s/%s: exit %d\n got %s\nwant the pools policy's refusal, one of %q", pod.Namespace, pod.Name, out.ExitCode, got, messages)
}

// missingGrantRefusal is what kubectl prints when the pools policy finds no Role in the pod's namespace: the
// apiserver refuses the request as invalid, with its own message.
func missingGrantRefusal(pod *corev1.Pod) string {
	return fmt.Sprintf("The pods %q is invalid: : ValidatingAdmissionPolicy '%s' with binding '%s' denied request: %s", pod.Name, poolsPolicy, poolsPolicy, missingGrant)
}

// waitForRoleRestoredT waits until Crossplane has composed a namespace's Role kiso-placement again, with a
// new UID, and returns that UID.
func waitForRoleRestoredT(t *testing.T, namespace, deletedUID string) string {
	t.Helper()
	u := env.Cluster.WaitForT(t, policyInForceTimeout, RBACRoleKind, namespace, "kiso-placement", func(u *unstructured.Unstructured) (bool, string) {
		return string(u.GetUID()) != deletedUID && u.GetDeletionTimestamp() == nil, "not composed again yet"
	})
	return string(u.GetUID())
}

// grantsWarn is a wait for a namespace's Role to grant (or not) warn on a pool: Warn mode.
func grantsWarn(want bool) func(u *unstructured.Unstructured) (bool, string) {
	return func(u *unstructured.Unstructured) (bool, string) {
		rules, _, _ := unstructured.NestedSlice(u.Object, "rules")
		found := false
		for _, r := range rules {
			verbs, _, _ := unstructured.NestedStringSlice(r.(map[string]any), "verbs")
			found = found || slices.Contains(verbs, "warn")
		}
		return found == want, fmt.Sprintf("rules %v", rules)
	}
}
