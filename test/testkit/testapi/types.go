package testapi

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/opgen-sdk/opgen/apis"
)

// GroupVersion is the API group and version of Gadget.
var GroupVersion = schema.GroupVersion{Group: "test.opgen.dev", Version: "v1"}

// GVK is Gadget's group, version and kind.
var GVK = GroupVersion.WithKind("Gadget")

// Gadget is a small custom kind with a status subresource.
type Gadget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              GadgetSpec   `json:"spec"`
	Status            GadgetStatus `json:"status,omitempty"`
}

// GadgetSpec is the desired state.
type GadgetSpec struct {
	Size    int32  `json:"size,omitempty"`
	Message string `json:"message,omitempty"`
}

// GadgetStatus is the observed state.
type GadgetStatus struct {
	apis.Status `json:",inline"`
	Phase       string `json:"phase,omitempty"`
	Count       int32  `json:"count,omitempty"`
}

// GadgetList is a list of Gadgets.
type GadgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Gadget `json:"items"`
}

var (
	_ apis.ObservedGenerationObject = (*Gadget)(nil)
	_ apis.ConditionsObject         = (*Gadget)(nil)
)

// GetObservedGeneration returns status.observedGeneration.
func (g *Gadget) GetObservedGeneration() int64 { return g.Status.ObservedGeneration }

// SetObservedGeneration sets status.observedGeneration.
func (g *Gadget) SetObservedGeneration(v int64) { g.Status.ObservedGeneration = v }

// GetConditions returns status.conditions.
func (g *Gadget) GetConditions() []metav1.Condition { return g.Status.Conditions }

// SetConditions sets status.conditions.
func (g *Gadget) SetConditions(c []metav1.Condition) { g.Status.Conditions = c }

// DeepCopyInto copies g into out.
func (g *Gadget) DeepCopyInto(out *Gadget) {
	*out = *g
	out.TypeMeta = g.TypeMeta
	g.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec = g.Spec
	g.Status.Status.DeepCopyInto(&out.Status.Status)
}

// DeepCopy returns a deep copy of g.
func (g *Gadget) DeepCopy() *Gadget {
	if g == nil {
		return nil
	}
	out := new(Gadget)
	g.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (g *Gadget) DeepCopyObject() runtime.Object { return g.DeepCopy() }

// DeepCopyObject implements runtime.Object.
func (l *GadgetList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := &GadgetList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]Gadget, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}

// AddToScheme registers Gadget and GadgetList.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Gadget{}, &GadgetList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
