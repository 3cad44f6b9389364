import Foundation
import Logging
import StateLoop
import StateLoopInspectorWire
import Synchronization

/// The app's side of the inspector: a monitor for each system the app lets it watch, and the
/// session they record, redacted before anything is kept.
///
/// ```swift
/// let inspector = Inspector(app: "Nightride", redacting: ["password"])
/// let monitor = inspector.monitor(named: "client", of: ClientState.self, ClientEvent.self)
/// let system = System(initialState: state, reduce: reduce, feedbacks: feedbacks, monitor: monitor)
/// monitor.attach(to: system)
/// inspector.connect(to: "ws://127.0.0.1:7357/app?token=…")
/// ```
///
/// Cost: a monitor's calls, on the system's actor, copy the event and the state (values, so a
/// copy is a retain) into a bounded buffer; encoding, redaction and sending happen later, off
/// that actor. When the buffer is full the oldest records go, and a
/// `InspectorRecord.Kind.dropped` record says how many: the app is never held up. A system
/// without a monitor pays nothing.
///
/// Lifetime: releasing the inspector ends its connection and its watches.
/// Threading: every method may be called from any isolation.
public final class Inspector: Sendable {
    /// The app's name, for the inspector's list of apps.
    public let app: String
    /// The fields that never leave the app.
    public let redaction: Redaction
    /// This inspector's session: the same on every reconnection, and how the inspector's app list
    /// (`GET /apps`) names this app.
    public let sessionID = UUID().uuidString
    let buffer: RecordBuffer
    let encoder: RecordEncoder
    let previews = PreviewBook()
    let dispatchers = DispatchBook()
    private let link = Mutex<Link>(Link())

    private struct Link {
        var task: Task<Void, Never>?
        /// Bumped by every ``connect(to:logger:)`` and ``disconnect()``: a link reports its
        /// connection only while it is the current one.
        var generation: UInt64 = 0
        var isConnected = false
        /// The tasks that watch resources and journals; each ends when what it watches stops.
        var watches: [Task<Void, Never>] = []
    }

    /// - Parameters:
    ///   - app: The app's name, as the inspector lists it.
    ///   - fields: Names of the fields redacted in every event, state and effect request, at
    ///     any depth (a password, a token).
    ///   - capacity: How many records are kept before the oldest go.
    public convenience init(app: String, redacting fields: Set<String> = [], capacity: Int = 10_000) {
        self.init(app: app, redacting: fields, capacity: capacity, startedAgo: .zero)
    }

    /// An inspector whose session is taken to have started `startedAgo` before now: tests give
    /// apps clocks that disagree this way.
    package init(app: String, redacting fields: Set<String> = [], capacity: Int = 10_000, startedAgo: Duration) {
        self.app = app
        redaction = Redaction(fields: fields)
        buffer = RecordBuffer(capacity: capacity)
        encoder = RecordEncoder(redaction: redaction, start: .now - startedAgo, started: Date().timeIntervalSince1970 - startedAgo.inSeconds)
    }

    deinit {
        let tasks = link.withLock { link in [link.task].compactMap { $0 } + link.watches }
        for task in tasks { task.cancel() }
    }

    /// A monitor for the system named `name`: give it to the system's initializer, then call
    /// ``InspectorMonitor/attach(to:)`` with the system.
    public func monitor<State: Encodable & Sendable, Event: Encodable & Sendable>(
        named name: String, of state: State.Type = State.self, _ event: Event.Type = Event.self
    ) -> InspectorMonitor<State, Event> {
        InspectorMonitor(name: name, inspector: self)
    }

    /// The session so far: every record the buffer still holds, encoded and redacted, oldest
    /// first. Taking it leaves the buffer as it is.
    public func session() -> InspectorSession {
        InspectorSession(app: app, redaction: redaction, records: buffer.snapshot().map(encoder.record), started: encoder.started)
    }

    /// How many records were dropped so far because the buffer was full.
    public var droppedRecords: Int {
        buffer.dropped
    }

    // MARK: Connection

    /// Connects to the inspector at `url` (`ws://127.0.0.1:PORT/app?token=…`, as
    /// `stateloop-inspector` prints it) and sends it every record, live: those the buffer holds
    /// now, then each as it comes. Reconnects by itself until ``disconnect()``; while away, the
    /// buffer keeps the latest records and drops the oldest. Replaces an earlier connection.
    public func connect(to url: String, logger: Logger = Logger(label: "stateloop.inspector")) {
        link.withLock { link in
            link.task?.cancel()
            link.generation += 1
            link.isConnected = false
            let connection = InspectorLink(
                url: url, generation: link.generation, inspector: WeakInspector(self), buffer: buffer, encoder: encoder,
                hello: AppMessage.Hello(session: sessionID, app: app, redaction: redaction), logger: logger
            )
            link.task = Task.detached { await connection.run() }
        }
    }

    /// Ends the connection, if any, and every preview it showed; the buffer keeps recording.
    public func disconnect() {
        link.withLock { link in
            link.task?.cancel()
            link.task = nil
            link.generation += 1
            link.isConnected = false
        }
        let previews = previews
        Task { await previews.endAll() }
    }

    /// Whether the inspector has welcomed this app on the current connection.
    public var isConnected: Bool {
        link.withLock { $0.isConnected }
    }

    /// Notes whether the link of `generation` is welcomed; ignored from a link replaced since.
    func setConnected(_ connected: Bool, generation: UInt64) {
        link.withLock { link in
            if link.generation == generation { link.isConnected = connected }
        }
    }

    // MARK: Keeping records

    /// Keeps a record of `kind` for the system named `system`: the monitors' one way in, not
    /// generic, so that a monitor's calls do not look up generic types on every event.
    func keep(
        _ kind: InspectorRecord.Kind, system: String, event: (any Encodable & Sendable)?, state: (any Encodable & Sendable)?,
        detail: RecordBuffer.Entry.Detail
    ) {
        buffer.append(RecordBuffer.Entry(at: .now, system: system, kind: kind, event: event, state: state, detail: detail))
    }

    /// Keeps a record of one of the rarer kinds, built whole (a resource's, say): its sequence
    /// and time are set here.
    package func keep(_ record: InspectorRecord) {
        buffer.append(RecordBuffer.Entry(at: .now, system: record.system, kind: record.kind, detail: .record(record)))
    }

    /// Keeps a record of `kind` for the system named `system`, whose fields `build` sets when
    /// the record is encoded, off the caller's thread, with the session's redaction: a watched
    /// server's activity is kept for the cost of a closure.
    package func keep(
        _ kind: InspectorRecord.Kind, system: String, build: @escaping @Sendable (inout InspectorRecord, Redaction) -> Void
    ) {
        let fields = InspectorRecord(sequence: 0, time: 0, system: system, kind: kind)
        buffer.append(RecordBuffer.Entry(at: .now, system: system, kind: kind, detail: .built(fields, build)))
    }

    /// A value of the app's as JSON, through reflection (its stored properties, `Codable` or
    /// not), redacted: a server's principal, say.
    package static func reflected(_ value: any Sendable, redaction: Redaction) -> JSONValue {
        redaction.apply(to: ReflectedValue.reflect(value, depth: 0))
    }

    func keepWatch(_ task: Task<Void, Never>) {
        link.withLock { $0.watches.append(task) }
    }

    /// Keeps the tasks of a watch (StateLoopInspectorJournal's): they end with what they watch,
    /// or with the inspector.
    package func keepWatches(_ tasks: [Task<Void, Never>]) {
        link.withLock { $0.watches.append(contentsOf: tasks) }
    }
}

/// The inspector as its link sees it: weakly, so that a connected inspector the app released
/// goes, and its link with it.
final class WeakInspector: Sendable {
    weak let inspector: Inspector?

    init(_ inspector: Inspector) {
        self.inspector = inspector
    }
}
