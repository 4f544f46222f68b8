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
)

// Condition reasons.
const (
	ReasonValid        = "Valid"
	ReasonInvalidSpec  = "InvalidSpec"
	ReasonResolved     = "Resolved"
	ReasonWaiting      = "WaitingForReferences"
	ReasonNotFound     = "ReferenceNotFound"
	ReasonAvailable    = "Available"
	ReasonNameConflict = "NameConflict"
)
