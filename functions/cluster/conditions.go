package main

// Condition types this function sets on the XR.
const (
	// TypeSpecValid is False when the spec cannot be rendered as written.
	TypeSpecValid = "SpecValid"
	// TypeNamesAvailable is False when an object kiso did not create holds a
	// name one of the cluster's managed resources needs.
	TypeNamesAvailable = "NamesAvailable"
)

// Condition reasons.
const (
	ReasonValid        = "Valid"
	ReasonInvalidSpec  = "InvalidSpec"
	ReasonAvailable    = "Available"
	ReasonNameConflict = "NameConflict"
)
