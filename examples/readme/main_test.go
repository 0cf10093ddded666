package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRun runs the README program and checks its output against relu(x·w)
// computed here in float64 from the same x and w.
func TestRun(t *testing.T) {
	x := [2][3]float64{{1, 2, 3}, {-1, 0, 1}}
	w := [3][2]float64{{1, -1}, {2, 0}, {0, 3}}
	var want []float32
	for i := range 2 {
		for j := range 2 {
			var acc float64
			for k := range 3 {
				acc += x[i][k] * w[k][j]
			}
			want = append(want, float32(max(acc, 0)))
		}
	}
	got, err := run()
	require.NoError(t, err)
	require.Equal(t, want, got)
}

// TestREADMEShowsProgram: the README's "Using it" block is this package's
// main.go from "package main" on, so the snippet compiles and runs as
// written.
func TestREADMEShowsProgram(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	prog, err := os.ReadFile("main.go")
	require.NoError(t, err)
	s := string(readme)
	at := strings.Index(s, "## Using it")
	require.GreaterOrEqual(t, at, 0, "README has a Using it section")
	start := strings.Index(s[at:], "```go\n")
	require.GreaterOrEqual(t, start, 0)
	block := s[at+start+len("```go\n"):]
	block = block[:strings.Index(block, "```")]
	body := string(prog)
	body = body[strings.Index(body, "package main"):]
	require.Equal(t, body, block, "README snippet and examples/readme/main.go differ")
}
