package gen

import (
	"context"
	"fmt"
	"go/ast"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"golang.org/x/tools/go/packages"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/opgen-sdk/opgen/gen/diag"
	"github.com/opgen-sdk/opgen/gen/internal/universe"
	"github.com/opgen-sdk/opgen/gen/model"
	"sigs.k8s.io/controller-tools/pkg/loader"
	"sigs.k8s.io/controller-tools/pkg/markers"

	crdmarkers "sigs.k8s.io/controller-tools/pkg/crd/markers"
)

// Generator is one kind of output. Every generator registers the markers
// it reads, then generates from the shared Context into the staged Output.
// Problems in the user's code go to Context.Errors with a position; the
// returned error is for failures that are not the user's (a library
// failing, a bug).
type Generator interface {
	RegisterMarkers(into *markers.Registry) error
	Generate(ctx *Context) error
}

// NoMarkers gives a generator that reads no markers of its own (only the
// API model's, which the run registers) a RegisterMarkers that registers
// nothing: embed it.
type NoMarkers struct{}

// RegisterMarkers registers nothing.
func (NoMarkers) RegisterMarkers(*markers.Registry) error { return nil }

// Preparer is implemented by generators that need the shared packages
// before they run concurrently: the runner calls Prepare in its own
// goroutine, after the API model is built and before any Generate, and
// Prepare takes from the packages what Generate will need.
type Preparer interface {
	Prepare(ctx *Context) error
}

// Concurrent is implemented by generators whose Generate reads only the API
// model and what Prepare took, never the shared package graph, whose lazy
// parsing and type-checking is not safe for concurrent use. The runner runs
// them in parallel with the others.
type Concurrent interface {
	Concurrent()
}

// CRDReader is implemented by generators that read Context.CRDs. The
// run builds the CRDs once, before any generator runs, as a stage of its
// own in the timings.
type CRDReader interface {
	ReadsCRDs()
}

// FullTyper is implemented by generators that read, besides the API
// packages, the types of other packages in full: conversion-gen's peers,
// say. FullTypes names them, by import path, from the roots' syntax and
// the API model's markers (it runs before the type-check). The run keeps
// their syntax whole when it makes the other dependencies lean
// (gen/internal/lean); a package the load does not hold is the
// generator's to load.
type FullTyper interface {
	FullTypes(ctx *Context, api *model.API) []string
}

// ClientWriter is implemented by the generator of the typed clients: the
// run then says which kinds get none.
type ClientWriter interface {
	WritesClients()
}

// DeepCopier is implemented by the generator of deep copies: the run then
// checks that the API types can be copied (model.Checks).
type DeepCopier interface {
	CopiesTypes()
}

// FromCRDs is embedded by generators that write from the run's CRDs: it
// registers controller-tools' CRD markers, which the CRDs are built from,
// and makes the generator a CRDReader.
type FromCRDs struct{}

// RegisterMarkers registers the CRD markers; the run adds Kubernetes'
// +k8s: tags (gen/k8stags) after every generator's markers, unless
// Options.IgnoreK8sTags.
func (FromCRDs) RegisterMarkers(into *markers.Registry) error { return crdmarkers.Register(into) }

// ReadsCRDs says that the generator reads the run's CRDs.
func (FromCRDs) ReadsCRDs() {}

// Context is what every generator of a run shares: the project, the
// packages loaded once by controller-tools, the markers collected from
// them, the API model derived from the markers, the staged output and the
// errors.
type Context struct {
	context.Context
	Project *Project
	// Roots are the packages the patterns select, loaded lazily by
	// controller-tools' loader.
	Roots []*loader.Package
	// Collector parses markers from Roots with the registry every
	// generator registered into.
	Collector *markers.Collector
	// Fset is the file set of every loaded file.
	Fset *token.FileSet
	// Checker type-checks Roots on demand.
	Checker *loader.TypeChecker
	// API is the model of the API groups, versions, kinds and controllers.
	API *model.API
	// Output stages what the run writes.
	Output *Output
	// Errors collects the user's errors.
	Errors *diag.Errors
	// Warnings collects what the run did differently from what the user
	// may expect, with the fix; they do not stop the run.
	Warnings *diag.Errors

	notes *notes
	clock *clock
	// files are the roots' parsed files by path (DocMarker).
	files     map[string]*ast.File
	filesOnce sync.Once
}

// DocMarker returns the position of a marker line of the doc comment
// right above the declaration at decl (model.DocMarker), from the run's
// parsed files.
func (c *Context) DocMarker(decl token.Position, match func(text string) bool) (token.Position, bool) {
	c.filesOnce.Do(func() {
		c.files = map[string]*ast.File{}
		for _, r := range c.Roots {
			for _, f := range r.Syntax {
				c.files[c.Fset.Position(f.FileStart).Filename] = f
			}
		}
	})
	return model.DocMarker(c.Fset, c.files[decl.Filename], decl, match)
}

// CRDs returns the CRD of every kind of the API's packages, as
// controller-tools' CRD parser builds it (model.API.CRDs): built once per
// run and shared, so callers must not modify them (DeepCopy first). It
// uses the shared packages: call it from a sequential generator or from
// Prepare.
func (c *Context) CRDs() []*apiextensionsv1.CustomResourceDefinition { return c.API.CRDs() }

// Note records that the run went a slower way, and why; `opgen generate
// -v` and --timings show the notes. It is safe for concurrent use.
func (c *Context) Note(msg string) { c.notes.add(msg) }

// notes are a run's notes, in the order they were made.
type notes struct {
	mu   sync.Mutex
	msgs []string
}

func (n *notes) add(msg string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.msgs = append(n.msgs, msg)
}

func (n *notes) list() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.msgs)
}

// Packages returns the loaded packages of paths: those the run's load
// holds (the roots and what they import), and the others loaded now, in
// one go list, sharing the run's file set. Call it from a sequential
// generator or from Prepare.
func (c *Context) Packages(paths []string) (map[string]*loader.Package, error) {
	found, missing := universe.Find(c.Roots, paths)
	if len(missing) == 0 {
		return found, nil
	}
	cfg := &packages.Config{Context: c.Context, Dir: c.Project.Root, Env: LoadEnv(), BuildFlags: LoadFlags, Fset: c.Fset}
	more, err := loader.LoadRootsWithConfig(cfg, missing...)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", strings.Join(missing, " "), err)
	}
	for _, p := range more {
		found[p.PkgPath] = p
	}
	for _, p := range missing {
		if found[p] == nil {
			return nil, fmt.Errorf("load %s: the go command found no such package", p)
		}
	}
	return found, nil
}

// Position returns the position of pos in the shared file set.
func (c *Context) Position(pos token.Pos) token.Position {
	return c.Fset.Position(pos)
}

var noPos token.Position

// OwnInEveryPackage declares the file name in the directory of every root
// package as generated by this run, so that it is removed where the run no
// longer writes it (a package that stopped declaring an API group, say).
func (c *Context) OwnInEveryPackage(name string) { c.OwnInPackages(name, nil) }

// OwnInPackages is OwnInEveryPackage for the root packages in dirs only
// (every root when dirs is nil): a run whose options name the packages a
// generator writes to (--conversion-packages) leaves the others' files
// alone.
func (c *Context) OwnInPackages(name string, dirs map[string]bool) {
	for _, root := range c.Roots {
		if len(root.GoFiles) == 0 {
			continue
		}
		if dir := filepath.Dir(root.GoFiles[0]); dirs == nil || dirs[dir] {
			c.Output.Own(filepath.Join(dir, name))
		}
	}
}
