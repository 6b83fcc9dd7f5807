package testenv

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// InstallCRDs creates or updates every CustomResourceDefinition found in the
// YAML and JSON files under dir (other kinds are ignored) and waits until
// each is Established and its resources are served by discovery.
func (e *Environment) InstallCRDs(ctx context.Context, dir string) error {
	crds, err := ReadCRDs(dir)
	if err != nil {
		return err
	}
	if len(crds) == 0 {
		return fmt.Errorf("testenv: no CustomResourceDefinition in %s; run `go generate ./...` to write the CRDs, or fix the path", dir)
	}
	return e.ApplyCRDs(ctx, crds...)
}

// ApplyCRDs creates or updates crds and waits until they are usable.
func (e *Environment) ApplyCRDs(ctx context.Context, crds ...*apiextensionsv1.CustomResourceDefinition) error {
	client, err := apiextensionsclient.NewForConfig(e.Config)
	if err != nil {
		return err
	}
	api := client.ApiextensionsV1().CustomResourceDefinitions()
	for _, crd := range crds {
		if err := createOrUpdateCRD(ctx, api, crd); err != nil {
			return err
		}
	}
	for _, crd := range crds {
		if err := e.waitCRD(ctx, client, crd); err != nil {
			return err
		}
	}
	return nil
}

type crdAPI interface {
	Create(context.Context, *apiextensionsv1.CustomResourceDefinition, metav1.CreateOptions) (*apiextensionsv1.CustomResourceDefinition, error)
	Get(context.Context, string, metav1.GetOptions) (*apiextensionsv1.CustomResourceDefinition, error)
	Update(context.Context, *apiextensionsv1.CustomResourceDefinition, metav1.UpdateOptions) (*apiextensionsv1.CustomResourceDefinition, error)
}

func createOrUpdateCRD(ctx context.Context, api crdAPI, crd *apiextensionsv1.CustomResourceDefinition) error {
	_, err := api.Create(ctx, crd.DeepCopy(), metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		if err != nil {
			return fmt.Errorf("testenv: create CRD %s: %w", crd.Name, err)
		}
		return nil
	}
	existing, err := api.Get(ctx, crd.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("testenv: get CRD %s: %w", crd.Name, err)
	}
	update := crd.DeepCopy()
	update.ResourceVersion = existing.ResourceVersion
	if _, err := api.Update(ctx, update, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("testenv: update CRD %s: %w", crd.Name, err)
	}
	return nil
}

// waitCRD waits for the Established condition, for discovery to list
// every served version, so that REST mappers built afterwards know the kind,
// and for the OpenAPI v3 document of each served version, which the API
// server publishes a moment later and server-side apply tooling reads.
func (e *Environment) waitCRD(ctx context.Context, client apiextensionsclient.Interface, crd *apiextensionsv1.CustomResourceDefinition) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.NamesAccepted && c.Status == apiextensionsv1.ConditionFalse {
				return false, fmt.Errorf("names not accepted: %s", c.Message)
			}
		}
		if !established(got) {
			last = "not Established yet"
			return false, nil
		}
		for _, v := range crd.Spec.Versions {
			if !v.Served {
				continue
			}
			gv := crd.Spec.Group + "/" + v.Name
			list, err := e.clientset.Discovery().ServerResourcesForGroupVersion(gv)
			if err != nil || !hasResource(list, crd.Spec.Names.Plural) {
				last = gv + " not in discovery yet"
				return false, nil
			}
		}
		return e.openAPIPublished(crd, &last), nil
	})
	if err != nil {
		return fmt.Errorf("testenv: CRD %s is not usable: %w (%s)", crd.Name, err, last)
	}
	return nil
}

// openAPIPublished reports whether the API server's OpenAPI v3 index lists
// every served version of crd. A server without OpenAPI v3 counts as done.
func (e *Environment) openAPIPublished(crd *apiextensionsv1.CustomResourceDefinition, last *string) bool {
	paths, err := e.clientset.Discovery().OpenAPIV3().Paths()
	if apierrors.IsNotFound(err) {
		return true
	}
	if err != nil {
		*last = "OpenAPI v3 index: " + err.Error()
		return false
	}
	for _, v := range crd.Spec.Versions {
		if v.Served {
			if _, ok := paths["apis/"+crd.Spec.Group+"/"+v.Name]; !ok {
				*last = crd.Spec.Group + "/" + v.Name + " not in the OpenAPI v3 index yet"
				return false
			}
		}
	}
	return true
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}

func hasResource(list *metav1.APIResourceList, plural string) bool {
	for _, r := range list.APIResources {
		if r.Name == plural {
			return true
		}
	}
	return false
}

// ReadCRDs decodes the CustomResourceDefinitions in the .yaml, .yml and .json
// files under dir, in path order. Documents of other kinds are skipped.
func ReadCRDs(dir string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var paths []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch strings.ToLower(filepath.Ext(path)) {
		case ".yaml", ".yml", ".json":
			paths = append(paths, path)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("testenv: read CRDs: %w", err)
	}
	sort.Strings(paths)
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, path := range paths {
		found, err := decodeCRDs(path)
		if err != nil {
			return nil, err
		}
		crds = append(crds, found...)
	}
	return crds, nil
}

func decodeCRDs(path string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("testenv: %w", err)
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var crds []*apiextensionsv1.CustomResourceDefinition
	for doc := 1; ; doc++ {
		raw, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return crds, nil
		}
		if err != nil {
			return nil, fmt.Errorf("testenv: %s: document %d: %w", path, doc, err)
		}
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(raw, &meta); err != nil {
			return nil, fmt.Errorf("testenv: %s: document %d: %w", path, doc, err)
		}
		if meta.Kind != "CustomResourceDefinition" {
			continue
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(raw, crd); err != nil {
			return nil, fmt.Errorf("testenv: %s: document %d: %w", path, doc, err)
		}
		crds = append(crds, crd)
	}
}
