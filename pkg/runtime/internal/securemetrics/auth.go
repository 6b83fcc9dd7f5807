package securemetrics

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/time/rate"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/apimachinery/pkg/util/wait"
	authenticationv1client "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
)

// k8s.io/apiserver's delegating authenticator and authorizer are not used
// themselves. Their packages link the API server's CEL, OpenTelemetry and
// gRPC stacks into every operator: twice the binary, and 16 MiB more
// memory at start, for two review requests.

// The certificate files in a certificate directory: the keys of a
// kubernetes.io/tls Secret, as cert-manager writes them.
const (
	CertFile = "tls.crt"
	KeyFile  = "tls.key"
)

// reviewBackoff retries a TokenReview or SubjectAccessReview that failed
// for a transient reason: the API server's own default for its webhooks
// (k8s.io/apiserver/pkg/server/options.DefaultAuthWebhookRetryBackoff, not
// imported for this one value).
var reviewBackoff = wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}

// The caches of the reviews' answers.
const (
	tokenTTL      = time.Minute
	allowTTL      = 5 * time.Minute
	denyTTL       = 30 * time.Second
	reviewTimeout = 10 * time.Second
	reviewCache   = 1024 // answers kept of each kind
)

// Auth lets a request through when the API server authenticates its
// bearer token and authorizes the user to get the request's path as a
// non-resource URL.
type Auth struct {
	tokens  authenticationv1client.TokenReviewInterface
	reviews authorizationv1client.SubjectAccessReviewInterface
	// users maps a token's SHA-256 to its TokenReviewStatus; decisions a
	// SubjectAccessReviewSpec (as JSON) to its SubjectAccessReviewStatus.
	users, decisions *cache.LRUExpireCache
	log              logr.Logger
	// failed bounds the error log of reviews that could not be made (the
	// API server is down, or the operator may not create reviews).
	failed *rate.Sometimes
}

// NewAuth returns the check of requests that asks the API server through
// the two clients. It logs to log.
func NewAuth(authn authenticationv1client.AuthenticationV1Interface, authz authorizationv1client.AuthorizationV1Interface, log logr.Logger) *Auth {
	return &Auth{
		tokens:    authn.TokenReviews(),
		reviews:   authz.SubjectAccessReviews(),
		users:     cache.NewLRUExpireCache(reviewCache),
		decisions: cache.NewLRUExpireCache(reviewCache),
		log:       log,
		failed:    &rate.Sometimes{Interval: 30 * time.Second},
	}
}

// Wrap answers 401 without a valid bearer token, 403 when its user may not
// get the path, and 500 when the API server could not be asked.
func (a *Auth) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, err := a.authenticate(r)
		if err != nil {
			a.reviewFailed(w, "TokenReview", err)
			return
		}
		if user == nil {
			a.log.V(1).Info("refused a request without a valid bearer token", "remote", r.RemoteAddr, "path", r.URL.Path)
			http.Error(w, "Unauthorized: send a bearer token the API server accepts (a ServiceAccount token)", http.StatusUnauthorized)
			return
		}
		verb := strings.ToLower(r.Method)
		allowed, reason, err := a.authorize(r.Context(), user, verb, r.URL.Path)
		if err != nil {
			a.reviewFailed(w, "SubjectAccessReview", err)
			return
		}
		if !allowed {
			a.log.V(1).Info("refused an unauthorized request", "user", user.Username, "path", r.URL.Path, "reason", reason)
			http.Error(w, fmt.Sprintf("Forbidden: user %q may not %s %s: bind it to a ClusterRole with nonResourceURLs [%s] verbs [%s]",
				user.Username, verb, r.URL.Path, r.URL.Path, verb), http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// authenticate returns the user of the request's bearer token, nil when
// there is none or the API server does not accept it, or the error of a
// review that could not be made.
func (a *Auth) authenticate(r *http.Request) (*authenticationv1.UserInfo, error) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "bearer") || token == "" {
		return nil, nil
	}
	sum := sha256.Sum256([]byte(token))
	key := string(sum[:])
	if v, ok := a.users.Get(key); ok {
		return v.(*authenticationv1.UserInfo), nil
	}
	review := &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}
	var res *authenticationv1.TokenReview
	err := a.retry(r.Context(), func(ctx context.Context) (err error) {
		res, err = a.tokens.Create(ctx, review, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return nil, err
	}
	var user *authenticationv1.UserInfo
	if res.Status.Authenticated && res.Status.Error == "" {
		user = &res.Status.User
	}
	a.users.Add(key, user, tokenTTL)
	return user, nil
}

// authorize asks whether user may verb the non-resource path.
func (a *Auth) authorize(ctx context.Context, user *authenticationv1.UserInfo, verb, path string) (bool, string, error) {
	spec := authorizationv1.SubjectAccessReviewSpec{
		User: user.Username, Groups: user.Groups, UID: user.UID,
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: path, Verb: verb},
	}
	if len(user.Extra) > 0 {
		spec.Extra = map[string]authorizationv1.ExtraValue{}
		for k, v := range user.Extra {
			spec.Extra[k] = authorizationv1.ExtraValue(v)
		}
	}
	keyJSON, err := json.Marshal(spec)
	if err != nil {
		return false, "", err
	}
	key := string(keyJSON)
	if v, ok := a.decisions.Get(key); ok {
		st := v.(authorizationv1.SubjectAccessReviewStatus)
		return st.Allowed, st.Reason, nil
	}
	var res *authorizationv1.SubjectAccessReview
	err = a.retry(ctx, func(ctx context.Context) (err error) {
		res, err = a.reviews.Create(ctx, &authorizationv1.SubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return false, "", err
	}
	st := res.Status
	if st.EvaluationError != "" && !st.Allowed && !st.Denied {
		// No authorizer decided, and one could not evaluate: as the
		// delegating authorizer, an error, not cached.
		return false, "", fmt.Errorf("the API server could not evaluate the review: %s", st.EvaluationError)
	}
	ttl := denyTTL
	if st.Allowed {
		ttl = allowTTL
	}
	a.decisions.Add(key, st, ttl)
	return st.Allowed, st.Reason, nil
}

// retry makes a review, again with reviewBackoff while it fails for a
// reason that may pass (the API server unreachable, overloaded or failing),
// each attempt bounded by reviewTimeout.
func (a *Auth) retry(ctx context.Context, review func(context.Context) error) error {
	var last error
	err := wait.ExponentialBackoffWithContext(ctx, reviewBackoff, func(ctx context.Context) (bool, error) {
		rctx, cancel := context.WithTimeout(ctx, reviewTimeout)
		defer cancel()
		last = review(rctx)
		if last == nil {
			return true, nil
		}
		if reason := apierrors.ReasonForError(last); reason != metav1.StatusReasonUnknown && !transient(last) {
			return false, last // a refusal: retrying gives the same answer
		}
		return false, nil
	})
	if last != nil {
		return last
	}
	return err
}

// transient reports whether a review's error may pass by itself.
func transient(err error) bool {
	return apierrors.IsTooManyRequests(err) || apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) ||
		apierrors.IsInternalError(err) || apierrors.IsServiceUnavailable(err) || apierrors.IsUnexpectedServerError(err)
}

func (a *Auth) reviewFailed(w http.ResponseWriter, review string, err error) {
	a.failed.Do(func() {
		a.log.Error(err, "could not check a metrics request with the API server: is it reachable, and may the operator create "+
			"tokenreviews (authentication.k8s.io) and subjectaccessreviews (authorization.k8s.io)? The scrape was refused", "review", review)
	})
	http.Error(w, "could not check the request with the API server ("+review+"); see the operator's log", http.StatusInternalServerError)
}
