package compat

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseMarker(t *testing.T) {
	m, err := parseMarker(`+opgen:compat:allow=field-removed field=legacy reason="nobody \"ever\" set it"`)
	require.NoError(t, err)
	assert.Equal(t, &marker{rule: FieldRemoved, field: "legacy", reason: `nobody "ever" set it`}, m)
	m, err = parseMarker(`+opgen:compat:allow=version-removed version=v1alpha1 reason=unreleased`)
	require.NoError(t, err)
	assert.Equal(t, "v1alpha1", m.vers)
	for text, want := range map[string]string{
		`+opgen:compat:allow=field-removed reason="x"`:            "names no field",
		`+opgen:compat:allow=version-removed reason="x"`:          "names no version",
		`+opgen:compat:allow=type-changed version=v1 reason="x"`:  "version= is for version-removed only",
		`+opgen:compat:allow=type-changed reason="x`:              "the quoted value does not end",
		`+opgen:compat:allow=type-changed because="x"`:            `unknown argument "because"`,
		`+opgen:compat:allow=type-changed reason`:                 "is not key=value",
		`+opgen:compat:allow=type-changed reason=""`:              "has no reason",
		`+opgen:compat:allow=type-chaged reason="x"`:              "did you mean type-changed?",
		`+opgen:compat:allow=completely-unknown-thing reason="x"`: `unknown rule "completely-unknown-thing": write it`,
		`+opgen:compat:allow`:                                     "names no rule",
	} {
		_, err := parseMarker(text)
		if assert.Error(t, err, text) {
			assert.Contains(t, err.Error(), want, text)
		}
	}
}
