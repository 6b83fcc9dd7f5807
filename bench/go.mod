module github.com/opgen-sdk/opgen/bench

go 1.26.0

replace github.com/opgen-sdk/opgen => ../
