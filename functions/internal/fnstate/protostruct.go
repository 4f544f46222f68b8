// fromMap turns what a function renders into the protobuf Struct it returns, sharing with the
// request every part that did not change. In steady state a function renders what Crossplane already observed,
// and building a second copy of every unchanged spec, rule and label, only for gRPC to encode it and the garbage
// collector to free it, was most of what a large response cost beyond its encoding.

package fnstate

import (
	"math"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/crossplane/function-sdk-go/errors"
)

// fromMap returns m as structpb.NewStruct does, except that every part of m equal to the same part of like (an
// object the request holds: the observed object of the same composed resource name) is like's own Value,
// not a copy. like may be nil. The result shares memory with like, so neither may be changed afterwards.
func fromMap(m map[string]any, like *structpb.Struct) (*structpb.Struct, error) {
	// An observed object always holds more than was rendered (its uid, its resourceVersion, its status): comparing
	// it whole first would only compare its content twice.
	return newStruct(m, like.GetFields())
}

func newStruct(m map[string]any, like map[string]*structpb.Value) (*structpb.Struct, error) {
	s := &structpb.Struct{Fields: make(map[string]*structpb.Value, len(m))}
	for k, v := range m {
		if !utf8.ValidString(k) {
			return nil, errors.Errorf("invalid UTF-8 in string: %q", k)
		}
		var err error
		if s.Fields[k], err = value(v, like[k]); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// value is v as structpb.NewValue makes it, or like if that is equal.
func value(v any, like *structpb.Value) (*structpb.Value, error) {
	if like != nil && equal(v, like) {
		return like, nil
	}
	switch v := v.(type) {
	case map[string]any:
		s, err := newStruct(v, like.GetStructValue().GetFields())
		if err != nil {
			return nil, err
		}
		return structpb.NewStructValue(s), nil
	case []any:
		likeValues := like.GetListValue().GetValues()
		values := make([]*structpb.Value, len(v))
		for i, e := range v {
			var l *structpb.Value
			if i < len(likeValues) {
				l = likeValues[i]
			}
			var err error
			if values[i], err = value(e, l); err != nil {
				return nil, err
			}
		}
		return structpb.NewListValue(&structpb.ListValue{Values: values}), nil
	default:
		return structpb.NewValue(v)
	}
}

// equal reports whether structpb.NewValue(v) would be a Value equal to like, bit for bit. It allocates nothing.
// A type it does not know is never equal, so structpb converts it (or refuses it) as it would have.
func equal(v any, like *structpb.Value) bool {
	switch v := v.(type) {
	case nil:
		_, ok := like.GetKind().(*structpb.Value_NullValue)
		return ok
	case bool:
		k, ok := like.GetKind().(*structpb.Value_BoolValue)
		return ok && k.BoolValue == v
	case string:
		k, ok := like.GetKind().(*structpb.Value_StringValue)
		return ok && k.StringValue == v
	case float64:
		return equalNumber(v, like)
	case int64:
		return equalNumber(float64(v), like)
	case int:
		return equalNumber(float64(v), like)
	case int32:
		return equalNumber(float64(v), like)
	case map[string]any:
		s := like.GetStructValue()
		return s != nil && equalFields(v, s.GetFields())
	case []any:
		l := like.GetListValue()
		if l == nil || len(l.GetValues()) != len(v) {
			return false
		}
		for i, e := range v {
			if !equal(e, l.GetValues()[i]) {
				return false
			}
		}
		return true
	default:
		return false
	}
}

func equalFields(m map[string]any, like map[string]*structpb.Value) bool {
	if len(m) != len(like) {
		return false
	}
	for k, v := range m {
		l, ok := like[k]
		if !ok || !equal(v, l) {
			return false
		}
	}
	return true
}

// equalNumber compares bits, so that -0 and 0 stay what they were rendered as.
func equalNumber(v float64, like *structpb.Value) bool {
	k, ok := like.GetKind().(*structpb.Value_NumberValue)
	return ok && math.Float64bits(k.NumberValue) == math.Float64bits(v)
}
