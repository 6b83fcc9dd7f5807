// Package manifest is package pkg/manifest, which it forwards to.
//
// Deprecated: import github.com/opgen-sdk/opgen/pkg/manifest. The
// manifest builder moved out of gen, so that pkg/optest links no generator;
// this package remains for code that still imports it, and will go.
package manifest

import "github.com/opgen-sdk/opgen/pkg/manifest"

// Options are manifest.Options.
type Options = manifest.Options

// Build is manifest.Build.
func Build(o Options) ([]byte, error) { return manifest.Build(o) }
