package runtime

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"

	"github.com/opgen-sdk/opgen/pkg/runtime/internal/cachefill"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/clients"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/dispatch"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/fence"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/fieldset"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/inflight"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/observe"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/outage"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/ownwrites"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/preview"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/seen"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/serving"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/transport"
	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

// Operator owns the REST config, the informers, the controllers, leader
// election, the metrics and health server and shutdown. Make one with New,
// add controllers with Register, then call Run once.
type Operator struct {
	config     *rest.Config
	httpClient *http.Client
	// fillFilter drops from cache fills the managedFields entries the
	// caches do not keep (none with Options.KeepManagedFields) and the
	// spec fields a controller's CacheSpec does not name.
	fillFilter *cachefill.Filter
	// outage makes the caches wait for the API server.
	outage *outage.Waiter
	// fence refuses the writes of a replica that may no longer lead
	// (nil without leader election).
	fence *fence.Fence
	// preview turns every write into a dry run and records what it would
	// change (nil unless Options.Preview).
	preview *preview.Preview
	// revisions are the resourceVersions the operator's writes returned,
	// whichever client made them: the watch events at them are echoes.
	revisions ownwrites.Revisions
	// relists are the caches listing again after their watch expired.
	relists outage.Relists
	// probe asks the API server's /readyz, at most once a second.
	probe *serving.Probe

	opts        Options
	log         logr.Logger
	kube        *clients.Set
	mapper      meta.ResettableRESTMapper
	factories   map[string]clients.Factory
	broadcaster events.EventBroadcaster
	recorder    events.EventRecorder
	metrics     *observe.Metrics
	caches      *sharedCaches
	// schemas tell the field set of an owned object's apply.
	schemas *fieldset.Schemas
	// sharding is set with Options.Sharding (shard.go).
	sharding *sharding
	bus      *telemetry.Bus
	tracer   trace.Tracer

	mu        sync.Mutex
	plan      plan // the controllers and Runnables Run runs
	servers   atomic.Pointer[serving.Servers]
	checks    serving.Checks        // user /healthz and /readyz checks
	gatherers []prometheus.Gatherer // served on /metrics beside the registry
	ready     atomic.Bool
	leading   atomic.Bool
	inflight  inflight.Set   // keys handlers work on, for a stuck shutdown
	stuck     inflight.Stuck // actions stuck past their timeout, for /readyz
	serving   chan struct{}

	// dispatch holds the kinds with controllers in several versions
	// (versions.go).
	dispatch dispatch.Groups[VersionDispatch]

	// owned holds, by resource, what the operator's applies of owned
	// objects returned, for the readers (internal/ownwrites).
	owned ownwrites.ByResource
	// seen are the caches by resource, for Seen.
	seen seen.Caches
}

// repeatedLogEvery bounds how often one error line is written for one
// controller (observe.LimitRepeats).
const repeatedLogEvery = 10 * time.Second

// runner is a controller as the operator sees it, without its type
// parameter.
type runner interface {
	controllerName() string
	// setup creates the controller's informers and watches; the shared
	// client-go informers have synced.
	setup(ctx context.Context) error
	// informers are the informers setup created, to start and sync.
	informers() []cache.SharedIndexInformer
	// watchesStarted reports the controller's informers as started.
	watchesStarted()
	// work runs the workers until leadCtx ends (see Operator.work).
	work(leadCtx, handlerCtx context.Context)
	// previewDone reports whether a preview handled every object.
	previewDone() bool
}

// New returns an operator that talks to the API server with cfg. It checks
// opts (see Options for defaults) and builds the clients; it does not
// contact the API server.
func New(cfg *rest.Config, opts Options) (*Operator, error) {
	if cfg == nil {
		return nil, errors.New("runtime.New: cfg is nil; load one with runtime.LoadConfig")
	}
	opts, err := opts.complete()
	if err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	clientLimits(cfg, opts)
	if opts.Preview.Enabled {
		// The preview reads what the API server answers its dry runs.
		cfg.ContentType, cfg.AcceptContentTypes = "application/json", "application/json"
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = opts.Name
	}
	log := opts.Logger.WithSink(observe.LimitRepeats(opts.Logger.GetSink(), repeatedLogEvery)).WithName(opts.Name)
	o := &Operator{config: cfg, opts: opts, log: log, metrics: observe.NewMetrics(), serving: make(chan struct{})}
	o.stuck.Gauge = o.metrics.Stuck
	o.bus = observe.NewBus(o.metrics, o.log)
	o.tracer = observe.NewTracer(opts.TracerProvider)
	if err := o.buildClients(); err != nil {
		return nil, err
	}
	// A client a handler builds from RESTConfig, on a transport of its
	// own, has its writes told apart too.
	o.config.Wrap(o.revisions.Wrap)
	if o.preview != nil {
		// A client a handler builds from RESTConfig, on a transport of its
		// own, previews too. Set after buildClients, whose client has the
		// preview on top already.
		o.config.Wrap(o.preview.Wrap)
	}
	o.factories = map[string]clients.Factory{}
	if opts.Sharding {
		o.sharding = newSharding(o)
	}
	o.caches = newSharedCaches(o)
	o.schemas = fieldset.NewSchemas(o.kube.Discovery.OpenAPIV3())
	sink := &events.EventSinkImpl{Interface: o.kube.Events}
	o.broadcaster = events.NewBroadcaster(sink)
	var recorder events.EventRecorder = o.broadcaster.NewRecorder(scheme.Scheme, opts.Name)
	if o.preview != nil {
		recorder = preview.Recorder{Sink: sink, Scheme: scheme.Scheme, Controller: opts.Name, Log: o.log.WithName("events")}
	}
	o.recorder = observe.NoteLimit{EventRecorder: recorder}
	return o, nil
}

func (o *Operator) buildClients() error {
	var err error
	if o.httpClient, err = rest.HTTPClientFor(o.config); err != nil {
		return fmt.Errorf("runtime.New: build the HTTP client: %w", err)
	}
	if o.opts.KeepManagedFields {
		o.fillFilter = cachefill.NewSpecFilter()
	} else {
		o.fillFilter = cachefill.NewFilter(o.opts.Name)
	}
	// The API server's /readyz, which every authenticated identity may
	// read (ClusterRole system:public-info-viewer).
	apiReady := func(ctx context.Context) error {
		return o.kube.Discovery.RESTClient().Get().AbsPath("/readyz").Do(ctx).Error()
	}
	o.probe = serving.NewProbe(apiReady, o.config.Host)
	o.outage = outage.New(apiReady, o.log.WithName("caches"))
	if !o.opts.Preview.Enabled && !o.opts.LeaderElection.Disabled {
		o.fence = fence.New(o.opts.Clock, o.opts.LeaderElection.RenewDeadline)
	}
	o.httpClient = transport.Client(o.httpClient, transport.Layers{
		Fence: o.fence, Outage: o.outage, Revisions: &o.revisions, Filter: o.fillFilter,
		Gzip:      !o.config.DisableCompression,
		Throttled: observe.NewThrottled(o.metrics.Registry, o.log.WithName("client")),
	})
	if o.opts.Preview.Enabled {
		// Outermost, where the fence would be: every write of the
		// operator, whichever client made it, passes through it.
		o.preview = preview.New()
		o.httpClient = o.preview.Client(o.httpClient)
	}
	if o.kube, err = clients.Build(o.config, o.httpClient); err != nil {
		return fmt.Errorf("runtime.New: %w", err)
	}
	o.mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(o.kube.Discovery))
	return nil
}

// RESTConfig returns the config the operator talks to the API server with.
// In a preview (Options.Preview) the clients built from it send their
// writes as dry runs, as the operator's do.
func (o *Operator) RESTConfig() *rest.Config { return o.config }

// HTTPClient returns the HTTP client shared by every client the operator
// creates; pass it to generated NewForConfigAndClient constructors.
func (o *Operator) HTTPClient() *http.Client { return o.httpClient }

// Clientset returns client-go's clientset on the shared HTTP client.
func (o *Operator) Clientset() kubernetes.Interface { return o.kube.Clientset() }

// Dynamic returns a dynamic client on the shared HTTP client.
func (o *Operator) Dynamic() dynamic.Interface { return o.kube.Dynamic }

// RESTMapper maps kinds to resources with cached discovery.
func (o *Operator) RESTMapper() meta.RESTMapper { return o.mapper }

// Logger returns the operator's logger.
func (o *Operator) Logger() logr.Logger { return o.log }

// Recorder returns the operator's Kubernetes Event recorder. It cuts each
// note to the API server's limit of 1 KiB (ending it with "..."), which
// would otherwise reject the Event.
func (o *Operator) Recorder() events.EventRecorder { return o.recorder }

// Registry is the Prometheus registry served on /metrics; register a
// handler's own collectors with it.
func (o *Operator) Registry() *prometheus.Registry { return o.metrics.Registry }

// Options returns the options in force, defaults and environment applied.
func (o *Operator) Options() Options { return o.opts }

// Ready reports whether every cache has synced (what /readyz answers).
func (o *Operator) Ready() bool { return o.ready.Load() }

// Leading reports whether this replica works: it holds the lease, or
// election is off and Run is working.
func (o *Operator) Leading() bool { return o.leading.Load() }

// Informers returns the shared client-go informer factory for namespace,
// for handlers that read built-in kinds from a cache: request listers from
// it before Run, and Run starts and syncs them with the rest. When the
// operator watches all namespaces, every namespace maps to one factory
// that watches all of them; otherwise namespace must be a watched one, or
// "" for cluster-scoped kinds. Informers of it strip managedFields like
// every cache of the operator, and an owned kind with an informer here is
// watched through it instead of a metadata-only informer.
func (o *Operator) Informers(namespace string) informers.SharedInformerFactory {
	if o.opts.watchesAll() {
		namespace = AllNamespaces
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if f, ok := o.factories[namespace]; ok {
		return f.(informers.SharedInformerFactory)
	}
	f := informers.NewSharedInformerFactoryWithOptions(o.kube.Clientset(), 0,
		informers.WithNamespace(namespace), informers.WithTransform(o.opts.transform(nil)))
	o.factories[namespace] = f
	return f
}

// Telemetry returns the operator's event bus: subscribe to it for every
// watch, reconcile, scheduler, task and leadership event (see package
// telemetry). The operator's metrics and logs are subscribers of it.
func (o *Operator) Telemetry() *telemetry.Bus { return o.bus }
