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
/// let file = try JSONEncoder().encode(inspector.session())
/// ```
///
/// Cost: a monitor's calls, on the system's actor, copy the event and the state (values, so a
/// copy is a retain) into a bounded buffer; encoding, redaction and sending happen later, off
/// that actor, when the session is taken. When the buffer is full the oldest records go, and a
/// ``InspectorRecord/Kind/dropped`` record says how many: the app is never held up. A system
/// without a monitor pays nothing.
///
/// Threading: every method may be called from any isolation.
public final class Inspector: Sendable {
    /// The app's name, for the inspector's list of apps.
    public let app: String
    /// The fields that never leave the app.
    public let redaction: Redaction
    let buffer: RecordBuffer
    /// This inspector's session: the same on every reconnection, and how the inspector's app list
    /// (`GET /apps`) names this app.
    public let sessionID = UUID().uuidString
    private let start = ContinuousClock.now
    private let link = Mutex<Link>(Link())

    private struct Link {
        var task: Task<Void, Never>?
        var isConnected = false
        /// How to show a kept state in each attached system, by name.
        var previewers: [String: @Sendable ((any Sendable)?) async -> Bool] = [:]
        /// The tasks that watch resources; each ends when its resource stops.
        var watches: [Task<Void, Never>] = []
    }

    /// - Parameters:
    ///   - app: The app's name, as the inspector lists it.
    ///   - fields: Names of the fields redacted in every event and state, at any depth (a
    ///     password, a token).
    ///   - capacity: How many records are kept before the oldest go.
    public init(app: String, redacting fields: Set<String> = [], capacity: Int = 10_000) {
        self.app = app
        redaction = Redaction(fields: fields)
        buffer = RecordBuffer(capacity: capacity)
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
        InspectorSession(app: app, redaction: redaction, records: buffer.snapshot().map(record))
    }

    /// Connects to the inspector at `url` (`ws://127.0.0.1:PORT/app?token=…`, as
    /// `stateloop-inspector` prints it) and sends it every record, live: those the buffer holds
    /// now, then each as it comes. Reconnects by itself until ``disconnect()``; while away, the
    /// buffer keeps the latest records and drops the oldest. Replaces an earlier connection.
    public func connect(to url: String, logger: Logger = Logger(label: "stateloop.inspector")) {
        let task = Task.detached { [self] in await InspectorLink(url: url, inspector: self, logger: logger).run() }
        link.withLock { link in
            link.task?.cancel()
            link.task = task
        }
    }

    /// Ends the connection, if any; the buffer keeps recording.
    public func disconnect() {
        link.withLock { link in
            link.task?.cancel()
            link.task = nil
        }
    }

    /// Whether the inspector has welcomed this app on the current connection.
    public var isConnected: Bool {
        link.withLock { $0.isConnected }
    }

    func setConnected(_ connected: Bool) {
        link.withLock { $0.isConnected = connected }
    }

    func keepWatch(_ task: Task<Void, Never>) {
        link.withLock { $0.watches.append(task) }
    }

    /// Registers how to show a kept state of the system named `name` (``InspectorMonitor/attach(to:)``).
    func registerPreviewer(for name: String, _ show: @escaping @Sendable ((any Sendable)?) async -> Bool) {
        link.withLock { $0.previewers[name] = show }
    }

    /// Carries out a command of the inspector; returns what the app shows now, for a preview.
    func apply(_ command: InspectorCommand) async -> PreviewStatus? {
        if let preview = command.preview {
            return await show(preview.sequence, in: preview.system)
        }
        if let end = command.endPreview {
            guard let show = link.withLock({ $0.previewers[end.system] }) else {
                return PreviewStatus(system: end.system, sequence: nil, problem: "no system named \(end.system) is attached")
            }
            _ = await show(nil)
            return PreviewStatus(system: end.system, sequence: nil)
        }
        return nil
    }

    /// Shows the state kept with record `sequence` in the system named `system`.
    private func show(_ sequence: UInt64, in system: String) async -> PreviewStatus {
        guard let show = link.withLock({ $0.previewers[system] }) else {
            return PreviewStatus(system: system, sequence: nil, problem: "no system named \(system) is attached")
        }
        guard let entry = buffer.entry(sequence), entry.system == system, let state = entry.state else {
            return PreviewStatus(system: system, sequence: nil, problem: "record \(sequence) of \(system) is no longer in the app's buffer, or holds no state")
        }
        guard await show(state) else {
            return PreviewStatus(system: system, sequence: nil, problem: "\(system) has stopped")
        }
        return PreviewStatus(system: system, sequence: sequence)
    }

    /// How many records were dropped so far because the buffer was full.
    public var droppedRecords: Int {
        buffer.dropped
    }


    /// The record of one kept entry, its event and state encoded and redacted.
    func record(_ entry: RecordBuffer.Entry) -> InspectorRecord {
        var record: InspectorRecord
        if case .record(let fields) = entry.detail {
            record = fields
        } else {
            record = InspectorRecord(sequence: 0, time: 0, system: entry.system, kind: entry.kind)
        }
        record.sequence = entry.sequence
        record.time = seconds(since: start, to: entry.at)
        record.system = entry.system
        record.kind = entry.kind
        switch entry.detail {
        case .sent(let sent): record.source = sent ? "sent" : "effect"
        case .stale(let stale): record.reason = stale ? "stale" : "stopped"
        case .effect(let number, let request):
            record.effect = number
            record.request = request
        case .none, .record: break
        }
        if let event = entry.event { record.event = redaction.apply(to: Self.json(of: event)) }
        if let state = entry.state { record.state = redaction.apply(to: Self.json(of: state)) }
        return record
    }

    /// Keeps a record of `kind` for the system named `system`: the monitors' one way in, not
    /// generic, so that a monitor's calls do not look up generic types on every event.
    func keep(_ kind: InspectorRecord.Kind, system: String, event: (any Encodable & Sendable)?, state: (any Encodable & Sendable)?, detail: RecordBuffer.Entry.Detail) {
        buffer.append(RecordBuffer.Entry(at: .now, system: system, kind: kind, event: event, state: state, detail: detail))
    }

    /// Keeps a record of one of the rarer kinds, built whole (a resource's, say).
    func keep(_ record: InspectorRecord) {
        buffer.append(RecordBuffer.Entry(at: .now, system: record.system, kind: record.kind, detail: .record(record)))
    }

    private func seconds(since start: ContinuousClock.Instant, to instant: ContinuousClock.Instant) -> Double {
        let elapsed = start.duration(to: instant)
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// `value`'s `Codable` form as a JSON value; a value that cannot be encoded says why.
    static func json(of value: any Encodable & Sendable) -> JSONValue {
        do {
            return try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(value))
        } catch {
            return .object(["unencodable": .string("\(type(of: value)): \(error)")])
        }
    }
}
