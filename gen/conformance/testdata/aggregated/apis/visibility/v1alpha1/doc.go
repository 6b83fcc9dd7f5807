// Package v1alpha1 declares no type: it is here so that the clientset has
// the group version's client, as code-generator's kube_codegen.sh makes
// it for a package with a +genclient line.
// +groupName=visibility.example.com
package v1alpha1
