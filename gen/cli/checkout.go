package cli

import (
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"

	"golang.org/x/mod/modfile"
)

// opgenModule is the module path of opgen.
const opgenModule = "github.com/opgen-sdk/opgen"

// sourceFile is this file's path as the compiler saw it: absolute in a
// build from source files on disk, module-relative under -trimpath.
var sourceFile = func() string {
	_, file, _, _ := goruntime.Caller(0)
	return file
}()

// BuiltFromCheckout returns the opgen checkout the running binary was
// built from (go install ./cmd/opgen in a clone, or go run there), or ""
// for a binary built from the module cache (go install ...@v0.1.0) or
// with -trimpath. A checkout's version is none the module proxy serves,
// so a new project replaces opgen with it.
func BuiltFromCheckout() string { return checkoutOf(sourceFile) }

// checkoutOf returns the root of the opgen checkout that holds file,
// this package's source (gen/cli/checkout.go), when it still is one.
func checkoutOf(file string) string {
	if !filepath.IsAbs(file) {
		return "" // -trimpath
	}
	root := filepath.Dir(filepath.Dir(filepath.Dir(file)))
	if strings.Contains(filepath.Base(root), "@") {
		return "" // the module cache: a released or fetched version
	}
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil || modfile.ModulePath(data) != opgenModule {
		return ""
	}
	return root
}

// replaceOrCheckout returns replace, or, when it is empty, the checkout
// this opgen was built from; found says that the checkout was taken.
func replaceOrCheckout(replace string) (dir string, found bool) {
	if replace != "" {
		return replace, false
	}
	dir = BuiltFromCheckout()
	return dir, dir != ""
}
