import CoreMetrics
import Foundation
import Prometheus

/// What a ``SyncServer`` counts, through swift-metrics, into a Prometheus registry that its
/// `/metrics` route renders. The metrics are made with the registry's own factory rather than
/// the process-wide `MetricsSystem`, so several servers in one process (tests, say) keep
/// separate counts and nothing needs bootstrapping.
struct ServerMetrics: Sendable {
    let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory
    /// Values handed to a socket's outbox.
    let pushesQueued: CoreMetrics.Counter
    /// Values replaced in an outbox before their socket read them (a slow reader).
    let pushesCoalesced: CoreMetrics.Counter
    /// Values not pushed: older than what the socket had, or its socket closed.
    let pushesDropped: CoreMetrics.Counter
    /// Messages written to sockets.
    let pushesSent: CoreMetrics.Counter
    /// Sockets closed because they did not read within the slow-reader timeout.
    let slowReadersClosed: CoreMetrics.Counter
    /// Sockets closed because their client sent frames faster than allowed (a ping flood).
    let floodingClientsClosed: CoreMetrics.Counter
    let openSockets: CoreMetrics.Gauge
    /// How long the store's transactions took, commit included.
    let commitLatency: CoreMetrics.Timer

    init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
        factory = PrometheusMetricsFactory(registry: registry)
        pushesQueued = CoreMetrics.Counter(label: "stateloop_pushes_queued_total", factory: factory)
        pushesCoalesced = CoreMetrics.Counter(label: "stateloop_pushes_coalesced_total", factory: factory)
        pushesDropped = CoreMetrics.Counter(label: "stateloop_pushes_dropped_total", factory: factory)
        pushesSent = CoreMetrics.Counter(label: "stateloop_pushes_sent_total", factory: factory)
        slowReadersClosed = CoreMetrics.Counter(label: "stateloop_slow_readers_closed_total", factory: factory)
        floodingClientsClosed = CoreMetrics.Counter(label: "stateloop_flooding_clients_closed_total", factory: factory)
        openSockets = CoreMetrics.Gauge(label: "stateloop_open_sockets", factory: factory)
        commitLatency = CoreMetrics.Timer(label: "stateloop_commit_seconds", preferredDisplayUnit: .seconds, factory: factory)
    }

    /// Counts a request answered on `route` with `status`.
    func countRequest(_ route: String, status: Int) {
        CoreMetrics.Counter(label: "stateloop_requests_total", dimensions: [("route", route), ("status", "\(status)")], factory: factory)
            .increment()
    }

    /// The registry in Prometheus's text format.
    func rendered() -> String {
        registry.emitToString()
    }
}
