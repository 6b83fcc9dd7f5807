package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"gomodules.xyz/jsonpatch/v2"
	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sigsjson "sigs.k8s.io/json"

	"github.com/opgen-sdk/opgen/apis"
)

// maxRequestBytes bounds a review's body, as the API server bounds
// objects (3 MiB in etcd, with room for old and new object and the
// conversion of a list page).
const maxRequestBytes = 64 << 20

// admitter answers the AdmissionReviews of one admission webhook of kind
// T: validate or mutate is set.
type admitter[T apis.Object] struct {
	server   *server
	hook     Hook
	validate Validator[T]
	mutate   Defaulter[T]
	// finalizer is the finalizer a new object must carry from its
	// creation (the runtime's finalizer at create), asked at each create.
	finalizer func(metav1.Object) string
}

func (a *admitter[T]) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	name := a.hook.Name()
	review, err := readReview[admissionv1.AdmissionReview](r)
	if err != nil || review.Request == nil {
		if err == nil {
			err = errors.New("the AdmissionReview has no request")
		}
		a.server.metrics.observe(name, resultError, start)
		http.Error(w, "webhook "+name+": "+err.Error(), http.StatusBadRequest)
		return
	}
	req := review.Request
	ctx, span := a.server.startSpan(r.Context(), name,
		attribute.String(AttrOperation, string(req.Operation)), attribute.String(AttrUID, string(req.UID)),
		attribute.String(AttrNamespace, req.Namespace), attribute.String(AttrObjectName, req.Name))
	resp, cause := a.admit(ctx, req)
	resp.UID = req.UID
	result := resultAllowed
	if !resp.Allowed {
		result = resultRejected
		code := int32(http.StatusForbidden)
		if resp.Result != nil {
			code = resp.Result.Code
		}
		if code == http.StatusBadRequest || code == http.StatusInternalServerError {
			result = resultError
		}
		a.server.metrics.rejections.WithLabelValues(name, string(req.Operation), strconv.Itoa(int(code))).Inc()
	}
	endSpan(span, cause, attribute.Bool(AttrAllowed, resp.Allowed))
	a.server.metrics.observe(name, result, start)
	writeReview(w, &admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: resp})
}

// admit runs the user's code on the request, recovering a panic into a
// rejection. cause is the error that rejected the request, if any.
func (a *admitter[T]) admit(ctx context.Context, req *admissionv1.AdmissionRequest) (resp *admissionv1.AdmissionResponse, cause error) {
	defer func() {
		if p := recover(); p != nil {
			cause = fmt.Errorf("webhook %s panicked: %v", a.hook.Name(), p)
			a.server.log.Error(cause, "a webhook panicked; the request is rejected", "operation", req.Operation, "namespace", req.Namespace, "name", req.Name)
			resp = deny(http.StatusInternalServerError, metav1.StatusReasonInternalError, cause.Error())
		}
	}()
	if a.mutate != nil {
		return a.doDefault(ctx, req)
	}
	return a.doValidate(ctx, req)
}

func (a *admitter[T]) doValidate(ctx context.Context, req *admissionv1.AdmissionRequest) (*admissionv1.AdmissionResponse, error) {
	var (
		warnings Warnings
		err      error
	)
	switch req.Operation {
	case admissionv1.Create:
		var obj T
		if obj, err = decode[T](req.Object.Raw, "object"); err != nil {
			return badRequest(err), err
		}
		warnings, err = a.validate.ValidateCreate(ctx, obj)
	case admissionv1.Update:
		var obj, old T
		if obj, err = decode[T](req.Object.Raw, "object"); err != nil {
			return badRequest(err), err
		}
		if old, err = decode[T](req.OldObject.Raw, "oldObject"); err != nil {
			return badRequest(err), err
		}
		warnings, err = a.validate.ValidateUpdate(ctx, old, obj)
	case admissionv1.Delete:
		dv, ok := a.validate.(DeleteValidator[T])
		if !ok {
			// A configuration registered before the handler lost its
			// ValidateDelete: there is nothing to check.
			return allow(nil), nil
		}
		var old T
		if old, err = decode[T](req.OldObject.Raw, "oldObject"); err != nil {
			return badRequest(err), err
		}
		warnings, err = dv.ValidateDelete(ctx, old)
	default:
		return allow(nil), nil // CONNECT is not in the rules; nothing to check
	}
	if err != nil {
		resp := rejection(err)
		resp.Warnings = warnings
		return resp, err
	}
	return allow(warnings), nil
}

func (a *admitter[T]) doDefault(ctx context.Context, req *admissionv1.AdmissionRequest) (*admissionv1.AdmissionResponse, error) {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return allow(nil), nil
	}
	obj, err := decode[T](req.Object.Raw, "object")
	if err != nil {
		return badRequest(err), err
	}
	if err := a.mutate.Default(ctx, obj); err != nil {
		return rejection(err), err
	}
	if req.Operation == admissionv1.Create && a.finalizer != nil {
		// Protected from birth: deleted before the operator's first
		// action, it still waits for Delete. Never on update, where it
		// would put back the finalizer Delete just removed.
		if f := a.finalizer(obj); f != "" {
			obj.SetFinalizers(append(obj.GetFinalizers(), f))
		}
	}
	defaulted, err := json.Marshal(obj)
	if err != nil {
		err = fmt.Errorf("encode the defaulted object: %w", err)
		return deny(http.StatusInternalServerError, metav1.StatusReasonInternalError, err.Error()), err
	}
	// The patch takes what the API server sent to what Default left, as
	// controller-runtime computes it.
	ops, err := jsonpatch.CreatePatch(req.Object.Raw, defaulted)
	if err != nil {
		err = fmt.Errorf("compute the JSON patch of the defaults: %w", err)
		return deny(http.StatusInternalServerError, metav1.StatusReasonInternalError, err.Error()), err
	}
	resp := allow(nil)
	if len(ops) == 0 {
		return resp, nil
	}
	if resp.Patch, err = json.Marshal(ops); err != nil {
		return deny(http.StatusInternalServerError, metav1.StatusReasonInternalError, err.Error()), err
	}
	pt := admissionv1.PatchTypeJSONPatch
	resp.PatchType = &pt
	return resp, nil
}

// decode decodes raw into a new object of the kind's Go type, with the
// API machinery's case-sensitive JSON decoding.
func decode[T apis.Object](raw []byte, field string) (T, error) {
	obj := reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)
	if len(raw) == 0 {
		return obj, fmt.Errorf("the request has no %s", field)
	}
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(raw, obj); err != nil {
		return obj, fmt.Errorf("decode the request's %s as %T: %w", field, obj, err)
	}
	return obj, nil
}

func allow(warnings Warnings) *admissionv1.AdmissionResponse {
	return &admissionv1.AdmissionResponse{Allowed: true, Warnings: warnings}
}

// rejection turns the user's error into the response: an API status
// (apierrors.NewInvalid with a field.ErrorList, NewForbidden, ...) is sent
// as it is, so kubectl shows "spec.x: Invalid value: ..."; any other
// error is a 403 with its message.
func rejection(err error) *admissionv1.AdmissionResponse {
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		status := st.Status()
		if status.Code == 0 {
			status.Code = http.StatusForbidden
		}
		status.Status = metav1.StatusFailure
		return &admissionv1.AdmissionResponse{Allowed: false, Result: &status}
	}
	return deny(http.StatusForbidden, metav1.StatusReasonForbidden, err.Error())
}

func badRequest(err error) *admissionv1.AdmissionResponse {
	return deny(http.StatusBadRequest, metav1.StatusReasonBadRequest, err.Error())
}

func deny(code int32, reason metav1.StatusReason, message string) *admissionv1.AdmissionResponse {
	return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{
		Status: metav1.StatusFailure, Code: code, Reason: reason, Message: message,
	}}
}

// readReview decodes a review from the request body.
func readReview[R any](r *http.Request) (*R, error) {
	if r.Method != http.MethodPost {
		return nil, fmt.Errorf("method %s; the API server POSTs reviews", r.Method)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read the request: %w", err)
	}
	if len(body) > maxRequestBytes {
		return nil, fmt.Errorf("the request is larger than %d bytes", maxRequestBytes)
	}
	review := new(R)
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(body, review); err != nil {
		return nil, fmt.Errorf("decode the review: %w", err)
	}
	return review, nil
}

func writeReview(w http.ResponseWriter, review any) {
	data, err := json.Marshal(review)
	if err != nil {
		http.Error(w, "encode the review: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(data)
}
