module github.com/opgen-sdk/opgen/hack/apicheck

go 1.26.8

require (
	github.com/stretchr/testify v1.12.1
	golang.org/x/exp v0.0.0-20261113113407-e3970619a1a4
	golang.org/x/tools v0.52.1-0.20261106145633-d407941a339a
)

require (
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
)
