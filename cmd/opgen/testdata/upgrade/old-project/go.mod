module example.com/widget-operator

go 1.26.0

require github.com/opgen-sdk/opgen v0.1.0

// go tool opgen runs the opgen of this version, with its dependencies
// recorded in go.sum.
tool github.com/opgen-sdk/opgen/cmd/opgen
