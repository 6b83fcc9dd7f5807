package gen

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestReport(t *testing.T) {
	t.Parallel()
	res := &Result{
		Changes: []Change{{Path: "/p/internal/controller/widget.go", Op: "create"}, {Path: "/p/config/rbac/role.yaml", Op: "write"}},
		Timings: []Timing{{Name: "load", Duration: 1500 * time.Microsecond}},
	}
	var quiet, verbose bytes.Buffer
	res.Report(&quiet, "/p", false, time.Second)
	assert.Equal(t, "opgen: create internal/controller/widget.go\n", quiet.String(), "only scaffolds, which are the user's, are listed")
	res.Report(&verbose, "/p", true, time.Second)
	assert.Equal(t, "opgen: create internal/controller/widget.go\nopgen: write config/rbac/role.yaml\n"+
		"opgen: load                   2ms\nopgen: 2 file(s) changed (1s)\n", verbose.String())

	var upToDate bytes.Buffer
	(&Result{UpToDate: true}).Report(&upToDate, "/p", false, time.Second)
	assert.Empty(t, upToDate.String())
	(&Result{UpToDate: true}).Report(&upToDate, "/p", true, 20*time.Millisecond)
	assert.Equal(t, "opgen: up to date (20ms)\n", upToDate.String())
}
