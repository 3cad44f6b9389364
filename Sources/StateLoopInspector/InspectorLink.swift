import Foundation
import Logging
import StateLoopInspectorWire
import Synchronization
import WSClient

/// The app's connection to an inspector: sends every record the buffer gets, live, and shows
/// the previews the inspector asks for; reconnects by itself, resuming after the last record
/// the inspector holds of this session, so a reconnection repeats and loses nothing the buffer
/// still holds.
///
/// Ownership and threading: one task, owned by the ``Inspector`` that started it, runs
/// ``run()`` until cancelled. Records are encoded and redacted in it, never on a system's actor;
/// while it is away, the buffer keeps filling and drops its oldest records, so the app is never
/// held up.
struct InspectorLink: Sendable {
    let url: String
    let inspector: Inspector
    let logger: Logger
    /// Records per message: a burst goes in a few large frames, not one frame per record.
    static let batch = 256
    static let maximumFrameBytes = 64 << 20

    /// Connects and reconnects until cancelled, waiting 0.25 s after a failure, doubling to 5 s.
    func run() async {
        var backoff = Duration.milliseconds(250)
        while !Task.isCancelled {
            let connected = await connectOnce()
            inspector.setConnected(false)
            if connected { backoff = .milliseconds(250) }
            try? await Task.sleep(for: backoff)
            backoff = min(backoff * 2, .seconds(5))
        }
    }

    /// One connection, from the handshake to its end; returns whether it got as far as the
    /// inspector's welcome.
    private func connectOnce() async -> Bool {
        var configuration = WebSocketClientConfiguration(maxFrameSize: Self.maximumFrameBytes)
        configuration.autoPing = .disabled
        let welcomed = Flag()
        do {
            try await WebSocketClient.connect(url: url, configuration: configuration, logger: logger) { inbound, outbound, _ in
                try await outbound.write(.text(Self.text(AppMessage(hello: hello))))
                var messages = inbound.messages(maxSize: Self.maximumFrameBytes).makeAsyncIterator()
                guard let first = try await messages.next(), let welcome = Self.command(first)?.welcome else {
                    logger.warning("the inspector did not answer the app's hello")
                    return
                }
                welcomed.set()
                inspector.setConnected(true)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await send(after: welcome.lastSequence, to: outbound) }
                    while let message = try await messages.next() {
                        guard let command = Self.command(message) else { continue }
                        let status = await inspector.apply(command)
                        if let status { try await outbound.write(.text(Self.text(AppMessage(previewStatus: status)))) }
                    }
                    group.cancelAll()
                }
            }
        } catch {
            logger.debug("inspector connection ended", metadata: ["error": "\(error)"])
        }
        return welcomed.isSet
    }

    private var hello: AppMessage.Hello {
        AppMessage.Hello(session: inspector.sessionID, app: inspector.app, redaction: inspector.redaction)
    }

    /// Sends the records after `cursor` as they come, until cancelled or a write fails.
    private func send(after cursor: UInt64, to outbound: WebSocketOutboundWriter) async throws {
        var cursor = cursor
        while !Task.isCancelled {
            await inspector.buffer.waitForRecords(after: cursor)
            let entries = inspector.buffer.entries(after: cursor, limit: Self.batch)
            guard let last = entries.last else { continue }
            try await outbound.write(.text(Self.text(AppMessage(records: entries.map(inspector.record)))))
            cursor = last.sequence
        }
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
