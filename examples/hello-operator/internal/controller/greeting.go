package controller

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	"github.com/opgen-sdk/opgen/apis"
	hellov1 "github.com/opgen-sdk/opgen/examples/hello-operator/apis/hello/v1"
	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
)

const (
	// Image is the greeting server: it answers every HTTP request with the
	// text given by -text.
	Image = "hashicorp/http-echo:1.0"
	// Port is where the server and its Service listen.
	Port = 5000
	// Replicas is the size of each greeting server.
	Replicas = 2
)

// GreetingController runs Greetings: for each, a Deployment of the greeting
// server and a Service in front of it, with readiness reported in status.
type GreetingController struct {
	// deployments reads the Greetings' Deployments from the operator's
	// cache, for their readiness.
	deployments *runtime.Reader[*appsv1.Deployment]
}

// NewGreetingController returns the controller that the generated Setup
// registers. It reads Deployments, which the Greeting owns
// (+opgen:controller:owns), through the generated GreetingReaders: the
// runtime starts their cache in every namespace the operator watches, and
// also watches the owned Deployments through it.
func NewGreetingController(op *runtime.Operator) *GreetingController {
	return &GreetingController{deployments: NewGreetingReaders(op).Deployments()}
}

// Reconcile declares the Deployment and the Service and reports how many
// server replicas are ready. It runs for every verb but Delete: the first
// time the controller sees a Greeting (plug.Add), when its spec changed
// (plug.Modify: the Deployment gets the new greeting, which rolls its
// pods), and on every change to the Deployment, so readiness follows it.
func (c *GreetingController) Reconcile(ctx context.Context, a *plug.Action[*hellov1.Greeting]) error {
	switch a.Verb {
	case plug.Add:
		a.Normal("Created", "greeting server %s created, answering %q", a.Object.Name, a.Object.Spec.Greeting)
	case plug.Modify:
		a.Normal("Updated", "greeting server %s now answers %q", a.Object.Name, a.Object.Spec.Greeting)
	}
	g := a.Object
	a.Own(deployment(g), service(g))

	ready, err := c.readyReplicas(g)
	if err != nil {
		return err
	}
	g.Status.ReadyReplicas = ready
	g.Status.URL = fmt.Sprintf("http://%s.%s.svc:%d", g.Name, g.Namespace, Port)
	if ready >= Replicas {
		apis.MarkReady(g, "ServerReady", fmt.Sprintf("%d/%d replicas ready", ready, Replicas))
	} else {
		apis.MarkReconciling(g, "ServerStarting", fmt.Sprintf("%d/%d replicas ready", ready, Replicas))
	}
	return nil
}

// There is no Delete method: the Deployment and the Service are owned by the
// Greeting, so the garbage collector deletes them with it, and without Delete
// the runtime adds no finalizer.

func (c *GreetingController) readyReplicas(g *hellov1.Greeting) (int32, error) {
	dep, err := c.deployments.Get(g.Namespace, g.Name)
	if apierrors.IsNotFound(err) {
		return 0, nil // not created yet: this action's ApplyOwned creates it
	}
	if err != nil {
		return 0, fmt.Errorf("read Deployment %s/%s from the cache: %w", g.Namespace, g.Name, err)
	}
	if dep.Status.ObservedGeneration < dep.Generation {
		return 0, nil // the Deployment controller has not seen the latest spec yet
	}
	return dep.Status.ReadyReplicas, nil
}

func labels(g *hellov1.Greeting) map[string]string {
	return map[string]string{"app.kubernetes.io/name": "greeting", "app.kubernetes.io/instance": g.Name}
}

// deployment is the greeting server: Replicas pods answering with the
// greeting on Port.
func deployment(g *hellov1.Greeting) *appsv1ac.DeploymentApplyConfiguration {
	return appsv1ac.Deployment(g.Name, g.Namespace).
		WithLabels(labels(g)).
		WithSpec(appsv1ac.DeploymentSpec().
			WithReplicas(Replicas).
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(labels(g))).
			WithStrategy(appsv1ac.DeploymentStrategy().WithType(appsv1.RollingUpdateDeploymentStrategyType)).
			WithTemplate(corev1ac.PodTemplateSpec().
				WithLabels(labels(g)).
				WithSpec(corev1ac.PodSpec().WithContainers(server(g)))))
}

func server(g *hellov1.Greeting) *corev1ac.ContainerApplyConfiguration {
	return corev1ac.Container().
		WithName("server").
		WithImage(Image).
		WithArgs(fmt.Sprintf("-listen=:%d", Port), "-text=$(GREETING)").
		WithEnv(corev1ac.EnvVar().WithName("GREETING").WithValue(g.Spec.Greeting)).
		WithPorts(corev1ac.ContainerPort().WithName("http").WithContainerPort(Port).WithProtocol(corev1.ProtocolTCP)).
		WithReadinessProbe(corev1ac.Probe().WithHTTPGet(corev1ac.HTTPGetAction().WithPath("/").WithPort(intstr.FromString("http")))).
		WithSecurityContext(corev1ac.SecurityContext().
			WithRunAsNonRoot(true).
			WithRunAsUser(65532).
			WithAllowPrivilegeEscalation(false).
			WithReadOnlyRootFilesystem(true).
			WithCapabilities(corev1ac.Capabilities().WithDrop("ALL")))
}

// service exposes the greeting server on Port.
func service(g *hellov1.Greeting) *corev1ac.ServiceApplyConfiguration {
	return corev1ac.Service(g.Name, g.Namespace).
		WithLabels(labels(g)).
		WithSpec(corev1ac.ServiceSpec().
			WithSelector(labels(g)).
			WithPorts(corev1ac.ServicePort().
				WithName("http").
				WithPort(Port).
				WithTargetPort(intstr.FromString("http")).
				WithProtocol(corev1.ProtocolTCP)))
}
