import Foundation
import Logging
import StateLoopInspectorWire
import Synchronization
import WSClient

/// The app's connection to an inspector: sends every record the buffer gets, live, and shows
/// the previews the inspector asks for; reconnects by itself, resuming after the last record
/// the inspector holds of this session, so a reconnection repeats and loses nothing the buffer
/// still holds. Previews end with the connection that asked for them.
///
/// Ownership and threading: one task, owned by the ``Inspector`` that started it (which it
/// holds weakly: a released inspector ends it), runs ``run()`` until cancelled. Records are
/// encoded and redacted in it, never on a system's actor; while it is away, the buffer keeps
/// filling and drops its oldest records, so the app is never held up.
struct InspectorLink: Sendable {
    let url: String
    /// This link's number in its inspector: only the current link's connection state counts.
    let generation: UInt64
    let inspector: WeakInspector
    let buffer: RecordBuffer
    let encoder: RecordEncoder
    let hello: AppMessage.Hello
    let logger: Logger
    /// The most records in one message, and the size past which a message is sent as it is.
    static let batch = 256
    static let messageBytes = 1 << 20
    /// A record larger than this (encoded) has its event and state replaced by a note, so that
    /// a message always fits the inspector's frame limit.
    static let recordBytes = 8 << 20
    static let maximumFrameBytes = 64 << 20

    /// Connects and reconnects until cancelled or the inspector is released, waiting 0.25 s
    /// after a failure, doubling to 5 s.
    func run() async {
        var backoff = Duration.milliseconds(250)
        var outages = OutageReport(address: Self.address(of: url))
        while !Task.isCancelled, inspector.inspector != nil {
            let connected = await connectOnce()
            if !Task.isCancelled, inspector.inspector != nil, let message = outages.ended(welcomed: connected) { logger.warning("\(message)") }
            if let inspector = inspector.inspector {
                inspector.setConnected(false, generation: generation)
                // No inspector to bring the app back: it shows its live states again.
                await inspector.previews.endAll()
            }
            if connected { backoff = .milliseconds(250) }
            try? await Task.sleep(for: backoff)
            backoff = min(backoff * 2, .seconds(5))
        }
    }

    /// `url` without its query, which holds the token: what the app's log may say.
    static func address(of url: String) -> String {
        String(url.prefix { $0 != "?" })
    }

    /// One connection, from the handshake to its end; returns whether it got as far as the
    /// inspector's welcome.
    private func connectOnce() async -> Bool {
        var configuration = WebSocketClientConfiguration(maxFrameSize: Self.maximumFrameBytes)
        configuration.autoPing = .disabled
        let welcomed = Flag()
        do {
            try await WebSocketClient.connect(url: url, configuration: configuration, logger: logger) { inbound, outbound, _ in
                var hello = hello
                hello.elapsed = encoder.seconds(at: .now)
                try await outbound.write(.text(Self.text(AppMessage(hello: hello))))
                var messages = inbound.messages(maxSize: Self.maximumFrameBytes).makeAsyncIterator()
                guard let first = try await messages.next(), let welcome = Self.command(first)?.welcome else {
                    logger.warning("the inspector did not answer the app's hello")
                    return
                }
                welcomed.set()
                guard let previews = inspector.inspector?.previews, let dispatchers = inspector.inspector?.dispatchers else { return }
                inspector.inspector?.setConnected(true, generation: generation)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await send(after: welcome.lastSequence, to: outbound) }
                    while let message = try await messages.next() {
                        guard let command = Self.command(message),
                            let answer = await carryOut(command, previews: previews, dispatchers: dispatchers)
                        else { continue }
                        try await outbound.write(.text(Self.text(answer)))
                    }
                    group.cancelAll()
                }
            }
        } catch {
            logger.debug("inspector connection ended", metadata: ["error": "\(error)"])
        }
        return welcomed.isSet
    }

    /// Carries out a command of the inspector; returns the app's answer: what a system shows
    /// now, the states without a skipped event, or what became of an event sent.
    private func carryOut(_ command: InspectorCommand, previews: PreviewBook, dispatchers: DispatchBook) async -> AppMessage? {
        if let preview = command.preview {
            let entry = buffer.entry(preview.sequence)
            let state = entry?.system == preview.system ? entry?.state : nil
            return AppMessage(previewStatus: await previews.show(preview.sequence, state: state, in: preview.system))
        }
        if let end = command.endPreview {
            return AppMessage(previewStatus: await previews.end(end.system))
        }
        if let skip = command.skip {
            return AppMessage(
                recomputed: await previews.recompute(skipping: skip.sequence, in: skip.system, entries: buffer.snapshot(), encoder: encoder))
        }
        if let dispatch = command.dispatch {
            return AppMessage(dispatched: await dispatchers.dispatch(dispatch.event, to: dispatch.system))
        }
        return nil
    }

    /// Sends the records after `cursor` as they come, until cancelled or a write fails: a
    /// message holds up to ``batch`` records, fewer when they pass ``messageBytes``.
    private func send(after cursor: UInt64, to outbound: WebSocketOutboundWriter) async throws {
        var cursor = cursor
        // One coder for the connection: making one per record cost as much as a small record.
        let json = JSONEncoder()
        while !Task.isCancelled {
            await buffer.waitForRecords(after: cursor)
            let entries = buffer.entries(after: cursor, limit: Self.batch)
            guard !entries.isEmpty else { continue }
            var encoded: [Data] = []
            var bytes = 0
            for entry in entries {
                let record = try Self.encode(encoder.record(entry), with: json)
                if bytes + record.count > Self.messageBytes, !encoded.isEmpty {
                    try await outbound.write(.text(Self.recordsMessage(encoded)))
                    (encoded, bytes) = ([], 0)
                }
                encoded.append(record)
                bytes += record.count
                cursor = entry.sequence
            }
            try await outbound.write(.text(Self.recordsMessage(encoded)))
        }
    }

    /// A record as JSON; one too large for a message keeps its fields but for its event and
    /// state, which say how large they were.
    static func encode(_ record: InspectorRecord, with json: JSONEncoder = JSONEncoder()) throws -> Data {
        let data = try json.encode(record)
        guard data.count > recordBytes else { return data }
        var smaller = record
        let note = JSONValue.object(["tooLarge": .string("\(data.count) bytes encoded: too large to send")])
        if smaller.event != nil { smaller.event = note }
        if smaller.state != nil { smaller.state = note }
        if smaller.status != nil { smaller.status = note }
        return try json.encode(smaller)
    }

    /// `{"records": [...]}` from records already encoded.
    static func recordsMessage(_ records: [Data]) -> String {
        var text = #"{"records":["#
        for (index, record) in records.enumerated() {
            if index > 0 { text += "," }
            text += String(decoding: record, as: UTF8.self)
        }
        return text + "]}"
    }

    private static func text(_ message: AppMessage) -> String {
        // An AppMessage holds only strings, numbers and JSON values: it always encodes.
        String(decoding: (try? JSONEncoder().encode(message)) ?? Data("{}".utf8), as: UTF8.self)
    }

    private static func command(_ message: WebSocketMessage) -> InspectorCommand? {
        guard case .text(let text) = message else { return nil }
        return try? JSONDecoder().decode(InspectorCommand.self, from: Data(text.utf8))
    }
}

/// A flag set once, read after the connection's handler returned.
private final class Flag: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}

/// What an app's log says of its inspector's connection: once when the inspector goes away (or
/// answers nothing from the start), and not again at each retry until it was back.
struct OutageReport {
    /// Where the inspector is, without the token.
    let address: String
    private var told = false

    init(address: String) {
        self.address = address
    }

    /// The message for a connection that just ended, having been `welcomed` by the inspector or
    /// not; `nil` when this outage was told already.
    mutating func ended(welcomed: Bool) -> String? {
        if welcomed { told = false }
        guard !told else { return nil }
        told = true
        return welcomed
            ? "the inspector at \(address) went away: the app keeps its latest records and sends them when it is back"
            : "no inspector answers at \(address): the app keeps its latest records and tries again every few seconds"
    }
}
