package watchjson

import (
	"context"
	"reflect"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	sigsjson "sigs.k8s.io/json"
)

// Client gets and patches the objects of one resource in one namespace as
// client-go's generated typed client does (gentype.Client), and decodes
// the object the server returns in one pass, where client-go's decoder
// reads the JSON three times (a validity scan, the kind, the object): a
// status write returns the whole object, and reading it once takes about
// 40% less CPU (BenchmarkDecodeObject: 36 against 59 µs for 4 KB).
type Client[T runtime.Object] struct {
	c                   rest.Interface
	resource, namespace string
}

// NewClient returns the client of resource in namespace ("" for all, or
// for a cluster-scoped resource) through c.
func NewClient[T runtime.Object](c rest.Interface, resource, namespace string) Client[T] {
	return Client[T]{c: c, resource: resource, namespace: namespace}
}

// Get returns the object named name.
func (c Client[T]) Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error) {
	r := c.c.Get().
		NamespaceIfScoped(c.namespace, c.namespace != "").
		Resource(c.resource).
		Name(name)
	param(r, "resourceVersion", opts.ResourceVersion)
	return decodeResult[T](r.
		SetHeader("Accept", "application/json").
		Do(ctx))
}

// Patch patches the object named name (or its subresource) and returns
// the object the server returns.
func (c Client[T]) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (T, error) {
	r := c.c.Patch(pt).
		NamespaceIfScoped(c.namespace, c.namespace != "").
		Resource(c.resource).
		Name(name).
		SubResource(subresources...)
	for _, d := range opts.DryRun {
		r.Param("dryRun", d)
	}
	if opts.Force != nil {
		r.Param("force", strconv.FormatBool(*opts.Force))
	}
	param(r, "fieldManager", opts.FieldManager)
	param(r, "fieldValidation", opts.FieldValidation)
	return decodeResult[T](r.
		Body(data).
		SetHeader("Accept", "application/json").
		Do(ctx))
}

// param sets the query parameter name to value unless value is empty.
// Get and Patch set their options' parameters as VersionedParams(&opts,
// metav1.ParameterCodec) does, without its reflection, which cost a
// twentieth of a status write's CPU (TestOptionsAsParameterCodec).
func param(r *rest.Request, name, value string) {
	if value != "" {
		r.Param(name, value)
	}
}

// decodeResult returns the object of r, a new empty T with r's error as
// client-go's typed clients return it. Its TypeMeta is cleared, as theirs
// is.
func decodeResult[T runtime.Object](r rest.Result) (T, error) {
	body, err := r.Raw()
	if err != nil {
		return newObject[T](), r.Error() // the server's Status, as an APIStatus error
	}
	return decodeObject[T](body)
}

// decodeObject decodes the JSON of one T in one pass, with the options
// client-go's JSON serializer uses, and clears its TypeMeta.
func decodeObject[T runtime.Object](body []byte) (T, error) {
	obj := newObject[T]()
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(body, obj); err != nil {
		return obj, err
	}
	obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	return obj, nil
}

// newObject returns a new, empty T (T is a pointer to a struct).
func newObject[T runtime.Object]() T {
	return reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)
}
