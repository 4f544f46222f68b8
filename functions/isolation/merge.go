package main

import "slices"

// mergeTaints returns the reference's taints with kiso's own keys set to
// want, and nothing else touched: every taint whose key kiso does not manage
// keeps its place and content; the first taint with a managed key kiso wants
// is replaced in place, any other taint with a managed key is dropped, and
// wanted taints not yet present are appended in order. Merging twice gives the
// same list as merging once.
func mergeTaints(existing []any, managed []string, want []taint) []any {
	wanted := make(map[string]taint, len(want))
	for _, t := range want {
		wanted[t.Key] = t
	}
	placed := make(map[string]bool, len(want))
	out := make([]any, 0, len(existing)+len(want))
	for _, e := range existing {
		key := taintKey(e)
		if !slices.Contains(managed, key) {
			out = append(out, e)
			continue
		}
		if t, ok := wanted[key]; ok && !placed[key] {
			out = append(out, t.object())
			placed[key] = true
		}
	}
	for _, t := range want {
		if !placed[t.Key] {
			out = append(out, t.object())
			placed[t.Key] = true
		}
	}
	return out
}

func taintKey(t any) string {
	m, ok := t.(map[string]any)
	if !ok {
		return ""
	}
	k, _ := m["key"].(string)
	return k
}

func (t taint) object() map[string]any {
	return map[string]any{"key": t.Key, "value": t.Value, "effect": t.Effect}
}

// mergeStringMap returns existing with kiso's managed keys replaced by want:
// keys kiso does not manage are kept, managed keys kiso does not want are
// removed.
func mergeStringMap(existing map[string]string, managed []string, want map[string]string) map[string]string {
	out := make(map[string]string, len(existing)+len(want))
	for k, v := range existing {
		if !slices.Contains(managed, k) {
			out[k] = v
		}
	}
	for k, v := range want {
		out[k] = v
	}
	return out
}
