package universe

import (
	"fmt"
	"reflect"
	"unsafe"

	"golang.org/x/tools/go/packages"
	"k8s.io/gengo/v2/generator"
	gengoparser "k8s.io/gengo/v2/parser"
)

// LoadedParser returns a gengo parser that takes the packages of loaded
// (import path to name) as loaded already, with buildTag (the generator's
// GeneratedBuildTag). conversion-gen's and defaulter-gen's GetTargets ask
// their parser to load the peer packages into the universe; this parser
// finds them loaded and adds nothing, so the generator works on the
// universe as given.
//
// gengo has no API for it: the parser records what it loaded in two
// unexported maps, which are filled through reflection. Should a gengo
// release change them, LoadedParser fails (and a test with it) and the
// generator falls back to gengo's load.
func LoadedParser(loaded map[string]string, buildTag string) (*gengoparser.Parser, error) {
	p := gengoparser.NewWithOptions(gengoparser.Options{BuildTags: []string{buildTag}})
	v := reflect.ValueOf(p).Elem()
	pkgs, err := parserMap[map[string]*packages.Package](v, "goPkgs")
	if err != nil {
		return nil, err
	}
	done, err := parserMap[map[string]bool](v, "fullyProcessed")
	if err != nil {
		return nil, err
	}
	for path, name := range loaded {
		pkgs[path] = &packages.Package{ID: path, PkgPath: path, Name: name}
		done[path] = true
	}
	return p, nil
}

// parserMap returns the map held by the unexported field name of v.
func parserMap[M any](v reflect.Value, name string) (M, error) {
	var zero M
	f := v.FieldByName(name)
	if !f.IsValid() || f.Type() != reflect.TypeFor[M]() || f.IsNil() {
		return zero, fmt.Errorf("gengo's parser has no map %s of type %v", name, reflect.TypeFor[M]())
	}
	return *(*M)(unsafe.Pointer(f.UnsafeAddr())), nil
}

// Capture assembles gengo's files into the map, by package path: the
// file type of a generator whose output the run stages itself.
type Capture map[string][]byte

// AssembleFile renders f into the map.
func (c Capture) AssembleFile(f *generator.File, _ string) error {
	src, err := Assemble(f)
	c[f.PackagePath] = src
	return err
}
