package main

// Condition types this function sets on the XR.
const (
	// TypeSpecValid is False when the spec cannot be rendered as written.
	TypeSpecValid = "SpecValid"
)

// Condition reasons.
const (
	ReasonValid       = "Valid"
	ReasonInvalidSpec = "InvalidSpec"
)
