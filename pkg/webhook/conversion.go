package webhook

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	sigsjson "sigs.k8s.io/json"
)

// convertName is the webhook label of conversion requests in metrics and
// spans.
const convertName = "convert"

// converter answers the ConversionReviews of every converted kind of an
// operator, on ConvertPath.
type converter struct {
	server *server

	mu    sync.Mutex
	kinds map[schema.GroupKind]convertedKind
}

// convertedKind is a kind served through its hub.
type convertedKind struct {
	scheme   *k8sruntime.Scheme
	hub      schema.GroupVersionKind
	resource string // plural; the CRD is resource.group
}

func (c *converter) add(k convertedKind) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	gk := k.hub.GroupKind()
	if _, dup := c.kinds[gk]; dup {
		return fmt.Errorf("webhook.Convert: the conversion of %s is registered twice", gk)
	}
	c.kinds[gk] = k
	return nil
}

func (c *converter) lookup(gk schema.GroupKind) (convertedKind, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k, ok := c.kinds[gk]
	return k, ok
}

// crds are the names of the CustomResourceDefinitions converted.
func (c *converter) crds() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.kinds))
	for gk, k := range c.kinds {
		out = append(out, k.resource+"."+gk.Group)
	}
	return out
}

func (c *converter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	review, err := readReview[apiextensionsv1.ConversionReview](r)
	if err != nil || review.Request == nil {
		if err == nil {
			err = errors.New("the ConversionReview has no request")
		}
		c.server.metrics.observe(convertName, resultError, start)
		http.Error(w, "webhook convert: "+err.Error(), http.StatusBadRequest)
		return
	}
	req := review.Request
	_, span := c.server.startSpan(r.Context(), convertName, attribute.String(AttrUID, string(req.UID)),
		attribute.String("opgen.webhook.desired_api_version", req.DesiredAPIVersion), attribute.Int("opgen.webhook.objects", len(req.Objects)))
	resp := &apiextensionsv1.ConversionResponse{UID: req.UID, Result: metav1.Status{Status: metav1.StatusSuccess}}
	converted, err := c.convertAll(req)
	result := resultConverted
	if err != nil {
		result = resultError
		resp.Result = metav1.Status{Status: metav1.StatusFailure, Code: http.StatusBadRequest, Reason: metav1.StatusReasonBadRequest, Message: err.Error()}
		c.server.log.Error(err, "conversion failed", "desiredAPIVersion", req.DesiredAPIVersion, "objects", len(req.Objects))
	} else {
		resp.ConvertedObjects = converted
	}
	endSpan(span, err)
	c.server.metrics.observe(convertName, result, start)
	writeReview(w, &apiextensionsv1.ConversionReview{TypeMeta: review.TypeMeta, Response: resp})
}

// convertAll converts every object to the desired version; one failure
// fails the review (the API server then fails the whole request).
func (c *converter) convertAll(req *apiextensionsv1.ConversionRequest) (out []k8sruntime.RawExtension, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("a conversion function panicked: %v", p)
		}
	}()
	desired, err := schema.ParseGroupVersion(req.DesiredAPIVersion)
	if err != nil {
		return nil, fmt.Errorf("desiredAPIVersion %q: %w", req.DesiredAPIVersion, err)
	}
	out = make([]k8sruntime.RawExtension, len(req.Objects))
	for i, raw := range req.Objects {
		data, err := c.convert(raw.Raw, desired)
		if err != nil {
			return nil, fmt.Errorf("object %d of %d: %w", i+1, len(req.Objects), err)
		}
		out[i] = k8sruntime.RawExtension{Raw: data}
	}
	return out, nil
}

// convert converts one object: from its version to the hub, then to the
// desired version, with the conversion functions registered in the kind's
// scheme.
func (c *converter) convert(raw []byte, desired schema.GroupVersion) ([]byte, error) {
	var tm metav1.TypeMeta
	if err := json.Unmarshal(raw, &tm); err != nil {
		return nil, fmt.Errorf("decode apiVersion and kind: %w", err)
	}
	from := tm.GroupVersionKind()
	k, ok := c.lookup(from.GroupKind())
	if !ok {
		return nil, fmt.Errorf("the operator converts no %s (register it with webhook.Convert)", from.GroupKind())
	}
	if desired.Group != from.Group {
		return nil, fmt.Errorf("cannot convert %s to another group, %s", from, desired)
	}
	to := desired.WithKind(from.Kind)
	if from == to {
		return raw, nil
	}
	src, err := k.scheme.New(from)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", from, err)
	}
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(raw, src); err != nil {
		return nil, fmt.Errorf("decode %s: %w", from, err)
	}
	hub := src
	if from != k.hub {
		if hub, err = k.scheme.New(k.hub); err != nil {
			return nil, fmt.Errorf("hub %s: %w", k.hub, err)
		}
		if err := k.scheme.Convert(src, hub, nil); err != nil {
			return nil, fmt.Errorf("convert %s to the hub %s: %w", from, k.hub.Version, err)
		}
	}
	dst := hub
	if to != k.hub {
		if dst, err = k.scheme.New(to); err != nil {
			return nil, fmt.Errorf("%s: %w", to, err)
		}
		if err := k.scheme.Convert(hub, dst, nil); err != nil {
			return nil, fmt.Errorf("convert the hub %s to %s: %w", k.hub.Version, to.Version, err)
		}
	}
	dst.GetObjectKind().SetGroupVersionKind(to)
	return json.Marshal(dst)
}
