package cann_test

import (
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann"
)

// TestVersion: Version is a semantic version and is the first release
// CHANGELOG.md describes, so a release cannot bump one and forget the other.
func TestVersion(t *testing.T) {
	require.Regexp(t, `^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?$`, cann.Version)
	log, err := os.ReadFile("CHANGELOG.md")
	require.NoError(t, err)
	first := regexp.MustCompile(`(?m)^## \[?([^\]\s]+)\]?`).FindSubmatch(log)
	require.NotNil(t, first, "CHANGELOG.md has no release heading")
	require.Equal(t, cann.Version, string(first[1]), "the newest CHANGELOG entry is the current Version")
}

// TestLicense: the module ships the Apache-2.0 text with the project's
// copyright line.
func TestLicense(t *testing.T) {
	b, err := os.ReadFile("LICENSE")
	require.NoError(t, err)
	require.Contains(t, string(b), "Apache License\n                           Version 2.0, January 2004")
	require.Contains(t, string(b), "Copyright 2026 The cann-go Authors")
}
