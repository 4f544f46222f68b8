package main

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-tools/pkg/crd"
	"sigs.k8s.io/controller-tools/pkg/loader"
	"sigs.k8s.io/yaml"

	"github.com/crossplane/function-sdk-go/errors"
)

// inputKind is the kind of every function's input.
const inputKind = "Input"

// inputCRD renders the CRD of a function's input, named as controller-gen names it (<group>_<plural>.yaml),
// into packageDir, with the placeholders of its rules filled in from pkg's constants.
func inputCRD(p *crd.Parser, pkg *loader.Package, packageDir string) (string, []byte, error) {
	gv, ok := p.GroupVersions[pkg]
	if !ok {
		return "", nil, errors.Errorf("package %s has no +groupName marker", pkg.PkgPath)
	}
	gk := schema.GroupKind{Group: gv.Group, Kind: inputKind}
	p.NeedCRDFor(gk, nil)
	generated, ok := p.CustomResourceDefinitions[gk]
	if !ok {
		return "", nil, errors.Errorf("package %s has no %s type", pkg.PkgPath, inputKind)
	}
	c := generated.DeepCopy()
	pkg.NeedTypesInfo()
	for _, v := range c.Spec.Versions {
		if err := fillPlaceholders(v.Schema.OpenAPIV3Schema, pkg.Types); err != nil {
			return "", nil, errors.Wrapf(err, "cannot write the CRD of %s", gk)
		}
	}
	b, err := yaml.Marshal(c)
	if err != nil {
		return "", nil, errors.Wrapf(err, "cannot encode the CRD of %s", gk)
	}
	// A CRD object carries an empty status and creation time; a file to apply holds neither.
	obj := map[string]any{}
	if err := yaml.Unmarshal(b, &obj); err != nil {
		return "", nil, errors.Wrapf(err, "cannot decode the CRD of %s", gk)
	}
	delete(obj, "status")
	if meta, ok := obj["metadata"].(map[string]any); ok {
		delete(meta, "creationTimestamp")
	}
	if b, err = yaml.Marshal(obj); err != nil {
		return "", nil, errors.Wrapf(err, "cannot encode the CRD of %s", gk)
	}
	path := packageDir + "/" + gv.Group + "_" + c.Spec.Names.Plural + ".yaml"
	return path, append([]byte(generatedHeader), b...), nil
}
