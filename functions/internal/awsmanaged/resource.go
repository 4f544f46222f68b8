package awsmanaged

// A Reference names another managed resource, whose external name or ARN provider-aws fills in.
type Reference struct {
	Name string `json:"name"`
}

// A DeletionPolicy says what deleting the managed resource does in AWS.
type DeletionPolicy string

// DeletionOrphan leaves the resource in AWS when its managed resource is deleted.
const DeletionOrphan DeletionPolicy = "Orphan"

// ResourceSpec is what every managed resource's spec shares.
type ResourceSpec struct {
	ProviderConfigReference *Reference     `json:"providerConfigRef,omitempty"`
	DeletionPolicy          DeletionPolicy `json:"deletionPolicy,omitempty"`
}

// NewResourceSpec is the spec of a managed resource of that ProviderConfig; orphan leaves the resource in AWS
// when the managed resource is deleted, for what kiso took over rather than created.
func NewResourceSpec(providerConfig string, orphan bool) ResourceSpec {
	rs := ResourceSpec{ProviderConfigReference: &Reference{Name: providerConfig}}
	if orphan {
		rs.DeletionPolicy = DeletionOrphan
	}
	return rs
}
