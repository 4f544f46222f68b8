package main

// Condition types this function sets on the XR and its claim, one per thing
// that can stop an organization's pools from being rendered.
const (
	// TypeSpecValid is False when the spec cannot be rendered as written.
	TypeSpecValid = "SpecValid"
	// TypeReferencesResolved is False while a reference NodeClass or NodePool
	// is missing or not yet fetched.
	TypeReferencesResolved = "ReferencesResolved"
	// TypeNamesAvailable is False when an object kiso did not create holds a
	// name one of the organization's pools needs.
	TypeNamesAvailable = "NamesAvailable"
	// TypePoolsSettled is False while pools the spec no longer asks for are
	// kept until their replacements report Ready.
	TypePoolsSettled = "PoolsSettled"
)

// Condition reasons.
const (
	ReasonValid           = "Valid"
	ReasonInvalidSpec     = "InvalidSpec"
	ReasonResolved        = "Resolved"
	ReasonWaiting         = "WaitingForReferences"
	ReasonNotFound        = "ReferenceNotFound"
	ReasonClusterNotReady = "ClusterNotReady"
	ReasonAvailable       = "Available"
	ReasonNameConflict    = "NameConflict"
	ReasonSettled         = "Settled"
	ReasonReplacing       = "ReplacingPools"
)
