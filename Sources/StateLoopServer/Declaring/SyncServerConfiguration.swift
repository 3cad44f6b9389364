/// The limits and timings of a ``SyncServer``. Every limit answers with a clear error and
/// leaves the server serving others.
public struct SyncServerConfiguration: Sendable {
    /// The largest request body read, in bytes; a larger one is answered 413.
    public var maximumBodyBytes: Int
    /// The largest WebSocket frame a client may send, in bytes; a larger one closes the socket
    /// with code 1009 (message too big).
    public var maximumFrameBytes: Int
    /// The largest value pushed as itself, in bytes of JSON; a larger one is pushed as a hint
    /// (`{"changed": true}`) and the client pulls it. The default leaves room for the version
    /// in one 16 KiB frame, the largest WebSocket clients accept by default.
    public var maximumPushBytes: Int
    /// The most push sockets one principal may hold open; the next upgrade is refused (with
    /// 400, as Hummingbird answers every refused upgrade).
    public var maximumSocketsPerPrincipal: Int
    /// How long a push may wait for a socket that does not read before the socket is closed.
    /// Meanwhile its outbox keeps only the newest value per key.
    public var slowReaderTimeout: Duration

    /// About the most bytes of pushes and pongs one push socket holds that its client has not
    /// read yet. About half is the kernel's send buffer (`SO_SNDBUF`, set on push sockets only:
    /// Linux otherwise grows it to a megabyte or more, where a reader that stops reading would
    /// hide its backlog from the server), the other half the channel's own buffer, past which
    /// the channel stops taking writes. A socket that holds this much waits: its outbox keeps the
    /// newest value per key, and it is closed after ``slowReaderTimeout`` if its client has
    /// not made room. It bounds a fast reader's rate too (this much per round trip), so the
    /// default, 64 KiB, leaves room for several of the largest pushes; at least 16 KiB is used.
    public var pushBytesInFlight: Int

    /// How many frames a second a push socket's client may send, on average: the client only
    /// pings now and then (every 30 s by default) and closes, so more is a flood, which would
    /// take its event loop from every other connection on it. Twice as many may come at once;
    /// past that the socket is closed with 1008 (policy violation). A close frame is not counted.
    public var maximumClientFramesPerSecond: Int

    /// How long a connection whose peer vanished without a word (a phone that lost its network:
    /// no FIN, no reset) stays open: the kernel's TCP keepalive probes it after half this time
    /// of silence, then three times over the other half, and closes it when none is answered.
    /// The kernel does the watching, so an idle push socket costs no timer or task of its own.
    public var deadPeerTimeout: Duration

    /// How often an open push socket's session is checked again (the access policy's
    /// `principal(for:)` on the upgrade's request): a session that expired, or ended without
    /// ``SyncServer/closeSockets(of:)``, closes its sockets within this time (1008, signed
    /// out), instead of pushing to them for as long as they stay connected. `nil` checks only
    /// at the upgrade. Each check is a timer on the socket's event loop, not a task.
    public var sessionCheckInterval: Duration?

    /// How long a client may stay silent (no mutation processed) before its progress and last
    /// answer are forgotten, checked hourly; `nil` keeps them for ever. Thirty days by default:
    /// far beyond an offline client's usual absence (see ``ServerStore/forgetClients(idleSince:)``).
    public var forgetClientsAfter: Duration?

    /// How long the store's change feed keeps an entry (``ServerStore/forgetChanges(committedBefore:)``),
    /// checked hourly; `nil` keeps it for ever. Seven days by default: long enough to audit a
    /// week of changes or catch up after an outage, short enough not to grow without bound.
    public var forgetChangesAfter: Duration?

    /// The path of the Prometheus metrics route, `nil` for none. It needs no session: put it
    /// behind the network's own protection, or choose `nil` and render
    /// ``SyncServer/renderedMetrics`` on a route of the app's.
    public var metricsPath: String?

    /// Where the health routes are (`health` by default; `nil` for none): `GET /health/live`
    /// answers 200 while the process answers at all, for a liveness probe that restarts a
    /// stuck process; `GET /health/ready` answers 200 only when a commit can go through now
    /// (an empty write transaction, within the store's deadline), and 503 with `Retry-After`
    /// when the store cannot commit or a stop has begun (until the listener closes), for a
    /// load balancer that sends traffic only to instances that can take it. Not authenticated,
    /// and each probe is a write transaction: probe every few seconds.
    public var healthPath: String?

    /// Whether a change's push is encoded and framed once for all the sockets that get the same
    /// text, their drains scheduled in batches per event loop (`true`, always in use), or
    /// encoded, framed and scheduled once per socket: the benchmarks' baseline only.
    @_spi(Benchmarks) public var encodesPushesOnce = true

    /// How many writers one task of a fan-out drains per event loop: enough that scheduling
    /// costs little, few enough that a loop starts writing while the hub still offers to the
    /// rest. Internal: tests make it small, to cross batches with a few sockets.
    var pushDrainsPerTask = 128

    /// A configuration; every parameter has a default fit for a small service.
    public init(
        maximumBodyBytes: Int = 1 << 20,
        maximumFrameBytes: Int = 1 << 14,
        maximumPushBytes: Int = 15_000,
        maximumSocketsPerPrincipal: Int = 32,
        slowReaderTimeout: Duration = .seconds(10),
        deadPeerTimeout: Duration = .seconds(60),
        pushBytesInFlight: Int = 65_536,
        maximumClientFramesPerSecond: Int = 10,
        forgetClientsAfter: Duration? = .seconds(30 * 86_400),
        forgetChangesAfter: Duration? = .seconds(7 * 86_400),
        metricsPath: String? = "metrics",
        healthPath: String? = "health",
        sessionCheckInterval: Duration? = .seconds(30)
    ) {
        self.sessionCheckInterval = sessionCheckInterval
        self.forgetClientsAfter = forgetClientsAfter
        self.forgetChangesAfter = forgetChangesAfter
        self.metricsPath = metricsPath
        self.healthPath = healthPath
        self.maximumBodyBytes = maximumBodyBytes
        self.maximumFrameBytes = maximumFrameBytes
        self.maximumPushBytes = maximumPushBytes
        self.maximumSocketsPerPrincipal = maximumSocketsPerPrincipal
        self.slowReaderTimeout = slowReaderTimeout
        self.deadPeerTimeout = deadPeerTimeout
        self.pushBytesInFlight = pushBytesInFlight
        self.maximumClientFramesPerSecond = maximumClientFramesPerSecond
    }
}
