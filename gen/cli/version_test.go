package cli

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestDisplayVersion: a module version wins; a build without one shows the
// revision it was built from, marked when the tree was modified; with
// neither, "(devel)".
func TestDisplayVersion(t *testing.T) {
	vcs := func(version string, settings ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{Main: debug.Module{Path: opgenModule, Version: version}}
		for i := 0; i+1 < len(settings); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return bi
	}
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"no build information", nil, "(devel)"},
		{"release", vcs("v0.1.0"), "v0.1.0"},
		{"clone, stamped", vcs("v0.1.1-0.20261129120000-0123456789ab+dirty", "vcs.revision", "0123456789abcdef"), "v0.1.1-0.20261129120000-0123456789ab+dirty"},
		{"go run", vcs("(devel)"), "(devel)"},
		{"revision only", vcs("(devel)", "vcs.revision", "0123456789abcdef0123", "vcs.modified", "false"), "(devel) 0123456789ab"},
		{"modified tree", vcs("", "vcs.revision", "0123456789abcdef0123", "vcs.modified", "true"), "(devel) 0123456789ab-dirty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, displayVersion(tc.bi))
		})
	}
}
