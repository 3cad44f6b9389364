import Foundation
import Logging
import StateLoopInspectorWire
import WSCore

/// Limits the inspector's sockets share.
enum InspectorSockets {
    /// A batch of records with large states can be big; a page's first slices too.
    static let maximumFrameBytes = 64 << 20
}

/// One app's socket: its hello is answered with the last sequence held, then its records are
/// kept and its preview answers passed on, while the hub's commands for it are written out.
struct AppSocket {
    let hub: InspectorHub
    let logger: Logger

    func run(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async throws {
        var messages = inbound.messages(maxSize: InspectorSockets.maximumFrameBytes).makeAsyncIterator()
        guard let first = try await messages.next(), let hello = Self.decode(first)?.hello else {
            try await outbound.close(.policyViolation, reason: "expected a hello first")
            return
        }
        let (commands, outbox) = AsyncStream.makeStream(of: String.self)
        let (id, connection, lastSequence) = hub.appConnected(hello, outbox: outbox)
        defer { hub.appDisconnected(id, connection: connection) }
        logger.info("app connected", metadata: ["app": "\(hello.app)", "id": "\(id)"])
        try await outbound.write(.text(InspectorHub.text(InspectorCommand(welcome: .init(lastSequence: lastSequence)))))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await command in commands { try await outbound.write(.text(command)) }
            }
            while let message = try await messages.next() {
                guard let decoded = Self.decode(message) else { continue }
                if let records = decoded.records { hub.append(records, of: id) }
                if let status = decoded.previewStatus { hub.previewStatus(status, of: id) }
                if let status = decoded.dispatched { hub.dispatched(status, of: id) }
                if let answer = decoded.recomputed { hub.recomputed(answer, of: id) }
            }
            outbox.finish()
            group.cancelAll()
        }
    }

    private static func decode(_ message: WebSocketMessage) -> AppMessage? {
        guard case .text(let text) = message else { return nil }
        return try? JSONDecoder().decode(AppMessage.self, from: Data(text.utf8))
    }
}

/// One page's socket: the hub's messages for it written out, its requests carried out.
struct PageSocket {
    let hub: InspectorHub

    func run(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async throws {
        let outbox = hub.makePageOutbox()
        let id = hub.pageConnected(outbox: outbox)
        defer { hub.pageDisconnected(id) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await message in outbox.messages {
                    try await outbound.write(.text(message))
                    outbox.written(message)
                }
                // The hub closed this page's outbox (too slow, or stopping): end the socket, so
                // that the page reconnects to a fresh copy.
                try await outbound.close(.goingAway, reason: nil)
            }
            for try await message in inbound.messages(maxSize: 1 << 20) {
                guard case .text(let text) = message, let command = try? JSONDecoder().decode(PageCommand.self, from: Data(text.utf8)) else {
                    continue
                }
                hub.handle(command, fromPage: id)
            }
            outbox.finish()
            group.cancelAll()
        }
    }
}
