// Package manifest forwards to package pkg/manifest, where the manifest
// builder moved so that pkg/optest links no generator. Import
// github.com/opgen-sdk/opgen/pkg/manifest: this package remains only for
// the code that still imports it, and goes with the last.
package manifest

import "github.com/opgen-sdk/opgen/pkg/manifest"

// Options are manifest.Options.
type Options = manifest.Options

// Build is manifest.Build.
func Build(o Options) ([]byte, error) { return manifest.Build(o) }
