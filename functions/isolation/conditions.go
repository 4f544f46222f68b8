package main

// Condition types this function sets on the XR and its claim, besides
// xrcondition's, one per thing that can stop an organization's pools from
// being rendered.
const (
	// TypeReferencesResolved is False while a reference NodeClass or NodePool
	// is missing or not yet fetched.
	TypeReferencesResolved = "ReferencesResolved"
	// TypePoolsSettled is False while pools the spec no longer asks for are
	// kept until their replacements report Ready.
	TypePoolsSettled = "PoolsSettled"
	// TypeReferenceCurrent is False while pools stay on an older revision of
	// the reference pair, waiting for the organization's rollout wave.
	TypeReferenceCurrent = "ReferenceCurrent"
)

// Condition reasons.
const (
	ReasonResolved        = "Resolved"
	ReasonWaiting         = "WaitingForReferences"
	ReasonNotFound        = "ReferenceNotFound"
	ReasonClusterNotReady = "ClusterNotReady"
	ReasonSettled         = "Settled"
	ReasonReplacing       = "ReplacingPools"
	// ReasonRetiring is PoolsSettled's reason while retired pools, their replacements Ready, still hold nodes.
	ReasonRetiring       = "RetiringPools"
	ReasonTaking         = "TakingOrganization"
	ReasonCurrent        = "Current"
	ReasonWaitingForWave = "WaitingForWave"
	// ReasonNamespaceObjectsHeld is NamesAvailable's reason while something
	// else holds a namespace's ConfigMap or Role: everything else is composed.
	ReasonNamespaceObjectsHeld = "NamespaceObjectsHeld"
)
