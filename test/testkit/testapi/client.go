package testapi

import (
	"net/http"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/gentype"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/pkg/plug"
	opruntime "github.com/opgen-sdk/opgen/pkg/runtime"
)

// Scheme knows Gadget.
var Scheme = runtime.NewScheme()

// ParameterCodec encodes list and get options.
var ParameterCodec = runtime.NewParameterCodec(Scheme)

func init() {
	if err := AddToScheme(Scheme); err != nil {
		panic(err)
	}
}

// Client is the typed client of Gadgets, as opgen's clientset generator
// writes it: a gentype client.
type Client = *gentype.ClientWithList[*Gadget, *GadgetList]

// Clientset makes Gadget clients for one REST config.
type Clientset struct{ rest rest.Interface }

// NewForConfigAndClient returns a Clientset that shares httpClient.
func NewForConfigAndClient(cfg *rest.Config, httpClient *http.Client) (*Clientset, error) {
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &GroupVersion
	c.APIPath = "/apis"
	c.NegotiatedSerializer = serializer.NewCodecFactory(Scheme).WithoutConversion()
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	rc, err := rest.RESTClientForConfigAndClient(c, httpClient)
	if err != nil {
		return nil, err
	}
	return &Clientset{rest: rc}, nil
}

// Gadgets returns the client for namespace.
func (c *Clientset) Gadgets(namespace string) Client {
	return gentype.NewClientWithList[*Gadget, *GadgetList]("gadgets", c.rest, ParameterCodec, namespace,
		func() *Gadget { return &Gadget{} }, func() *GadgetList { return &GadgetList{} })
}

// GadgetListWatch lists and watches Gadgets in namespace, as the
// generated controller glue does.
func GadgetListWatch(c *Clientset, namespace string) *cache.ListWatch {
	return opruntime.ListWatch[*Gadget](c.rest, "gadgets", namespace)
}

// Kind is the runtime.Kind the generated controller glue builds.
func Kind(c *Clientset) opruntime.Kind[*Gadget] {
	return opruntime.Kind[*Gadget]{
		GVK:        GVK,
		Resource:   "gadgets",
		Namespaced: true,
		ListWatch: func(namespace string) *cache.ListWatch {
			return GadgetListWatch(c, namespace)
		},
		Client: func(namespace string) plug.Client[*Gadget] {
			return opruntime.Client[*Gadget](c.rest, "gadgets", namespace)
		},
	}
}

// KindFor builds the Kind from an operator's config and shared HTTP client.
func KindFor(op *opruntime.Operator) (opruntime.Kind[*Gadget], error) {
	c, err := NewForConfigAndClient(op.RESTConfig(), op.HTTPClient())
	if err != nil {
		return opruntime.Kind[*Gadget]{}, err
	}
	return Kind(c), nil
}
