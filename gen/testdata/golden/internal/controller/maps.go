package controller

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// ordersOfConfigMap wakes the Order a ConfigMap names in its order label
// (+opgen:controller:watches=v1.ConfigMap,map=ordersOfConfigMap).
func ordersOfConfigMap(obj metav1.Object) []cache.ObjectName {
	if name := obj.GetLabels()["shop.example.com/order"]; name != "" {
		return []cache.ObjectName{{Namespace: obj.GetNamespace(), Name: name}}
	}
	return nil
}
