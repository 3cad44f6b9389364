import Foundation
import Logging
import StateLoopInspectorWire
import Synchronization
import WSClient

/// A page of the inspector as a test reads it: the page socket, with every app list, record
/// and preview status it receives kept; it can ask for previews.
public final class TestPage: Sendable {
    private struct Seen {
        var apps: [[String: JSONValue]] = []
        var records: [Int: [InspectorRecord]] = [:]
        var previews: [[String: JSONValue]] = []
        var dispatched: [[String: JSONValue]] = []
        var recomputed: [Recomputed] = []
    }

    /// Shared with the socket's task.
    private final class Store: Sendable {
        let seen = Mutex(Seen())
    }

    private let store = Store()
    private let outgoing: AsyncStream<String>.Continuation
    private let task: Task<Void, Never>

    /// Connects to `url` (`ws://…/page?token=…`).
    public init(url: String) {
        let (commands, outgoing) = AsyncStream.makeStream(of: String.self)
        self.outgoing = outgoing
        let store = self.store
        var logger = Logger(label: "test-page")
        logger.logLevel = .critical
        task = Task {
            _ = try? await WebSocketClient.connect(url: url, configuration: .init(maxFrameSize: 64 << 20), logger: logger) { inbound, outbound, _ in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { for await command in commands { try await outbound.write(.text(command)) } }
                    for try await message in inbound.messages(maxSize: 64 << 20) {
                        guard case .text(let text) = message else { continue }
                        TestPage.take(text, into: store)
                    }
                    group.cancelAll()
                }
            }
        }
    }

    private static func take(_ text: String, into store: Store) {
        guard case .object(let message)? = try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) else { return }
        store.seen.withLock { seen in
            if case .array(let apps)? = message["apps"] {
                seen.apps = apps.compactMap { if case .object(let app) = $0 { app } else { nil } }
            }
            if case .object(let batch)? = message["records"], case .number(let app)? = batch["app"], let records = batch["records"],
                let decoded = try? JSONDecoder().decode([InspectorRecord].self, from: JSONEncoder().encode(records))
            {
                seen.records[Int(app), default: []].append(contentsOf: decoded)
            }
            if case .object(let status)? = message["previewStatus"] {
                seen.previews.append(status)
            }
            if case .object(let status)? = message["dispatched"] {
                seen.dispatched.append(status)
            }
            if case .object(let answer)? = message["recomputed"], let fields = answer["recomputed"],
                let decoded = try? JSONDecoder().decode(Recomputed.self, from: JSONEncoder().encode(fields))
            {
                seen.recomputed.append(decoded)
            }
        }
    }

    /// The latest app list.
    public var apps: [[String: JSONValue]] { store.seen.withLock { $0.apps } }
    /// Every record received of app `id`, in order.
    public func records(of id: Int) -> [InspectorRecord] { store.seen.withLock { $0.records[id] ?? [] } }
    /// Every preview status received.
    public var previews: [[String: JSONValue]] { store.seen.withLock { $0.previews } }

    /// Asks app `id` to show the state of record `sequence` of `system`.
    public func preview(app id: Int, system: String, sequence: UInt64) {
        outgoing.yield(#"{"preview":{"app":\#(id),"system":"\#(system)","sequence":\#(sequence)}}"#)
    }

    /// Every answer to a skip, in order.
    public var recomputed: [Recomputed] { store.seen.withLock { $0.recomputed } }

    /// Asks app `id` for `system`'s states without the event of record `sequence`.
    public func skip(app id: Int, system: String, sequence: UInt64) {
        outgoing.yield(#"{"skip":{"app":\#(id),"system":"\#(system)","sequence":\#(sequence)}}"#)
    }

    /// Every answer to an event sent, in order.
    public var dispatched: [[String: JSONValue]] { store.seen.withLock { $0.dispatched } }

    /// Sends `event` (its JSON text) to `system` of app `id`.
    public func dispatch(app id: Int, system: String, event: String) {
        outgoing.yield(#"{"dispatch":{"app":\#(id),"system":"\#(system)","event":\#(event)}}"#)
    }

    /// Asks app `id` to show the live state of `system` again.
    public func endPreview(app id: Int, system: String) {
        outgoing.yield(#"{"endPreview":{"app":\#(id),"system":"\#(system)"}}"#)
    }

    public func close() {
        outgoing.finish()
        task.cancel()
    }
}
