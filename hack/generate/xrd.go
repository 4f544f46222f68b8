package main

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-tools/pkg/crd"
	"sigs.k8s.io/controller-tools/pkg/loader"
	"sigs.k8s.io/yaml"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
)

// xrd is the part of a Crossplane CompositeResourceDefinition kiso writes: the envelope around a schema
// generated from the Go types. Crossplane's own Go types would bring its whole API module along for these
// few fields.
type xrd struct {
	APIVersion string      `json:"apiVersion"`
	Kind       string      `json:"kind"`
	Metadata   xrdMetadata `json:"metadata"`
	Spec       xrdSpec     `json:"spec"`
}

type xrdMetadata struct {
	Name string `json:"name"`
}

type xrdSpec struct {
	Scope                 string                                         `json:"scope"`
	Group                 string                                         `json:"group"`
	Names                 apiextensionsv1.CustomResourceDefinitionNames  `json:"names"`
	ClaimNames            *apiextensionsv1.CustomResourceDefinitionNames `json:"claimNames,omitempty"`
	DefaultCompositionRef xrdReference                                   `json:"defaultCompositionRef"`
	Versions              []xrdVersion                                   `json:"versions"`
}

type xrdReference struct {
	Name string `json:"name"`
}

type xrdVersion struct {
	Name                     string                                           `json:"name"`
	Served                   bool                                             `json:"served"`
	Referenceable            bool                                             `json:"referenceable"`
	AdditionalPrinterColumns []apiextensionsv1.CustomResourceColumnDefinition `json:"additionalPrinterColumns,omitempty"`
	Schema                   xrdSchema                                        `json:"schema"`
}

type xrdSchema struct {
	OpenAPIV3Schema apiextensionsv1.JSONSchemaProps `json:"openAPIV3Schema"`
}

// api is one composite resource: where its XRD goes, its envelope, and the Go types of its spec and status.
type api struct {
	path   string
	header string
	xrd    xrd
	spec   string
	status string
}

// category groups every kiso kind: kubectl get kiso lists them all.
const category = "kiso"

// xrCategories are a composite resource's categories.
var xrCategories = []string{"crossplane", "composite", category}

// column is a printer column of type string; priority 1 shows with -o wide only.
func column(name, jsonPath string, priority int32) apiextensionsv1.CustomResourceColumnDefinition {
	return apiextensionsv1.CustomResourceColumnDefinition{Name: name, Type: "string", JSONPath: jsonPath, Priority: priority}
}

// apis are kiso's composite resources.
var apis = []api{
	{
		path: "apis/karpentercluster/definition.yaml",
		header: `# XKarpenterCluster: everything Karpenter needs on AWS for one EKS cluster. A platform team composes one per
# cluster. Cluster-scoped with no claim: it is platform-level, and it composes cluster-scoped provider-aws
# managed resources plus a PrometheusRule in Karpenter's namespace.`,
		xrd: xrd{
			APIVersion: "apiextensions.crossplane.io/v2",
			Kind:       "CompositeResourceDefinition",
			Metadata:   xrdMetadata{Name: "xkarpenterclusters." + v1alpha1.Group},
			Spec: xrdSpec{
				Scope: "Cluster",
				Group: v1alpha1.Group,
				Names: apiextensionsv1.CustomResourceDefinitionNames{
					Kind:       v1alpha1.ClusterKind,
					Plural:     "xkarpenterclusters",
					Categories: xrCategories,
				},
				DefaultCompositionRef: xrdReference{Name: "karpentercluster"},
				Versions: []xrdVersion{{
					Name:          v1alpha1.Version,
					Served:        true,
					Referenceable: true,
					AdditionalPrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{
						column("CLUSTER", ".spec.clusterName", 0),
						column("REGION", ".spec.region", 0),
						column("QUEUE", ".status.queueName", 0),
						column("ROLLOUT", ".status.rollout", 0),
					},
				}},
			},
		},
		spec:   "XKarpenterClusterSpec",
		status: "XKarpenterClusterStatus",
	},
	{
		path: "apis/karpenterisolation/definition.yaml",
		header: `# XKarpenterIsolation: one organization's dedicated Karpenter capacity.
# LegacyCluster so tenants (or the platform) can ` + "`kubectl apply`" + ` one namespaced
# KarpenterIsolation claim per organization; the XR itself is cluster-scoped
# because the NodePools and NodeClasses it composes are.`,
		xrd: xrd{
			APIVersion: "apiextensions.crossplane.io/v1",
			Kind:       "CompositeResourceDefinition",
			Metadata:   xrdMetadata{Name: "xkarpenterisolations." + v1alpha1.Group},
			Spec: xrdSpec{
				Scope: "LegacyCluster",
				Group: v1alpha1.Group,
				Names: apiextensionsv1.CustomResourceDefinitionNames{
					Kind:       v1alpha1.IsolationKind,
					Plural:     "xkarpenterisolations",
					Categories: xrCategories,
				},
				ClaimNames: &apiextensionsv1.CustomResourceDefinitionNames{
					Kind:       v1alpha1.IsolationClaimKind,
					Plural:     "karpenterisolations",
					Categories: []string{"claim", category},
				},
				DefaultCompositionRef: xrdReference{Name: "karpenterisolation"},
				Versions: []xrdVersion{{
					Name:          v1alpha1.Version,
					Served:        true,
					Referenceable: true,
					// The organization's nodes and what they hold in all, as Karpenter counts them, against
					// its pools' limits (or spec.limits); status.pools has them per pool, CLASSES per class.
					AdditionalPrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{
						column("ORGANIZATION", ".spec.organization", 0),
						column("ISOLATION", ".spec.isolation", 0),
						column("CUSTOMER", ".spec.customer", 1),
						column("NODE-ROLE", ".spec.nodeRole", 1),
						column("POOLS", ".status.poolNames", 0),
						{Name: "NODES", Type: "integer", JSONPath: ".status.usage.nodes"},
						column("CPU", ".status.usage.resources.cpu", 0),
						column("CPU-LIMIT", ".status.usage.limits.cpu", 0),
						column("MEMORY", ".status.usage.resources.memory", 1),
						column("MEMORY-LIMIT", ".status.usage.limits.memory", 1),
						column("NODE-LIMIT", ".status.usage.limits.nodes", 1),
						column("CLASSES", ".status.classes", 1),
						column("REVISION", ".status.revisions", 1),
						column("REFERENCE", ".status.conditions[?(@.type=='ReferenceCurrent')].reason", 1),
					},
				}},
			},
		},
		spec:   "XKarpenterIsolationSpec",
		status: "XKarpenterIsolationStatus",
	},
}

// definition renders an API's XRD, its schema flattened from the Go types of its spec and status, with the
// placeholders of its rules filled in from pkg's constants.
func definition(p *crd.Parser, pkg *loader.Package, a api) ([]byte, error) {
	props := map[string]apiextensionsv1.JSONSchemaProps{}
	for field, typ := range map[string]string{"spec": a.spec, "status": a.status} {
		id := crd.TypeIdent{Package: pkg, Name: typ}
		p.NeedFlattenedSchemaFor(id)
		s, ok := p.FlattenedSchemata[id]
		if !ok {
			return nil, errors.Errorf("no schema for %s", typ)
		}
		props[field] = s
	}
	schema := (&apiextensionsv1.JSONSchemaProps{Type: "object", Properties: props}).DeepCopy()
	pkg.NeedTypesInfo()
	if err := fillPlaceholders(schema, pkg.Types); err != nil {
		return nil, errors.Wrapf(err, "cannot write the schema of %s", a.path)
	}
	x := a.xrd
	x.Spec.Versions[0].Schema.OpenAPIV3Schema = *schema
	b, err := yaml.Marshal(x)
	if err != nil {
		return nil, errors.Wrapf(err, "cannot encode %s", a.path)
	}
	return append([]byte(generatedHeader+a.header+"\n"), b...), nil
}
