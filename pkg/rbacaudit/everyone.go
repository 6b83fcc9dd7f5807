package rbacaudit

// everyone are the grants the API server's default roles give every
// authenticated user, service accounts included (bootstrap policy of
// kube-apiserver: system:discovery, system:basic-user and
// system:public-info-viewer, bound to system:authenticated): no operator
// role needs them, and a request they allow is not missing.
var everyone = func() []Grant {
	var out []Grant
	for _, u := range []string{"/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz", "/version", "/version/"} {
		out = append(out, Grant{Role: "ClusterRole/system:discovery", URL: u, Verb: "get"})
	}
	for _, r := range []struct{ group, resource string }{
		{"authorization.k8s.io", "selfsubjectaccessreviews"},
		{"authorization.k8s.io", "selfsubjectrulesreviews"},
		{"authentication.k8s.io", "selfsubjectreviews"},
	} {
		out = append(out, Grant{Role: "ClusterRole/system:basic-user", Group: r.group, Resource: r.resource, Verb: "create"})
	}
	return out
}()
