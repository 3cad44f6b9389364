import DequeModule
import Foundation
import StateLoopInspectorWire
import Synchronization

/// What the inspector knows: every app that connected (its records, at most `capacity` each,
/// the oldest let go first) and every page watching. Records reach the pages in the order the
/// hub took them, because they are handed to each page's outbox under the hub's lock.
///
/// Threading: a mutex guards everything; the socket handlers call in from their tasks. An
/// outbox is an `AsyncStream` that its socket's task writes out; a page whose outbox overflows
/// (``pageOutboxLimit`` messages or ``pageOutboxBytes`` bytes: ``PageOutbox``) is closed, and
/// reconnects to a fresh copy, rather than silently missing records.
final class InspectorHub: Sendable {
    private struct App {
        var hello: AppMessage.Hello
        var records = Deque<InspectorRecord>()
        var lastSequence: UInt64 = 0
        var dropped = 0
        var droppedByApp = 0
        /// When the app's session started, in seconds since 1970 on the inspector's clock: its
        /// hellos' arrival less the session time they were sent at. A hello's transit only makes
        /// the estimate later, so the earliest is kept.
        var clockBase: Double?
        /// The current connection's number and outbox; `nil` while the app is away.
        var connection: (number: Int, outbox: AsyncStream<String>.Continuation)?
    }

    private struct State {
        var apps: [Int: App] = [:]
        var appBySession: [String: Int] = [:]
        var pages: [Int: PageOutbox] = [:]
        /// The record each app's systems show in place of their live state, by app and system.
        var previews: [Int: [String: UInt64]] = [:]
        var lastID = 0
    }

    /// How many records the inspector keeps per app.
    let capacity: Int
    /// How many apps it keeps: past that, the apps that left longest ago are forgotten.
    static let maximumApps = 32
    /// How many messages a page's outbox holds before the page is closed as too slow.
    static let pageOutboxLimit = 10_000
    /// How many bytes of messages a page's outbox holds before the page is closed as too slow.
    let pageOutboxBytes: Int
    private let state = Mutex(State())

    init(capacity: Int, pageOutboxBytes: Int = 64 << 20) {
        self.capacity = max(1, capacity)
        self.pageOutboxBytes = max(1, pageOutboxBytes)
    }

    /// A new outbox for a page's socket, to hand to ``pageConnected(outbox:)``.
    func makePageOutbox() -> PageOutbox {
        PageOutbox(messageLimit: Self.pageOutboxLimit, byteLimit: pageOutboxBytes)
    }

    // MARK: Apps

    /// An app connected (or reconnected: the same session): returns its id, the connection's
    /// number, and the last sequence held of it.
    func appConnected(_ hello: AppMessage.Hello, outbox: AsyncStream<String>.Continuation) -> (id: Int, connection: Int, lastSequence: UInt64) {
        state.withLock { state in
            state.lastID += 1
            let connection = state.lastID
            let id: Int
            if let known = state.appBySession[hello.session] {
                id = known
                state.apps[id]?.connection?.outbox.finish()
            } else {
                state.lastID += 1
                id = state.lastID
                state.appBySession[hello.session] = id
                state.apps[id] = App(hello: hello)
                forgetAppsThatLeft(&state)
            }
            state.apps[id]?.connection = (connection, outbox)
            if let elapsed = hello.elapsed {
                let base = Date().timeIntervalSince1970 - elapsed
                let known = state.apps[id]?.clockBase ?? base
                state.apps[id]?.clockBase = min(known, base)
            }
            broadcastApps(&state)
            return (id, connection, state.apps[id]?.lastSequence ?? 0)
        }
    }

    /// The connection numbered `connection` of app `id` ended (a later one may have replaced it).
    func appDisconnected(_ id: Int, connection: Int) {
        state.withLock { state in
            guard state.apps[id]?.connection?.number == connection else { return }
            state.apps[id]?.connection = nil
            // The app shows its live states again by itself once its connection ends.
            state.previews[id] = nil
            broadcastApps(&state)
        }
    }

    /// Keeps an app's records (those it already holds are skipped) and shows them to every page.
    func append(_ records: [InspectorRecord], of id: Int) {
        state.withLock { state in
            guard var app = state.apps[id] else { return }
            let fresh = records.filter { $0.sequence > app.lastSequence }
            guard let last = fresh.last else { return }
            app.records.append(contentsOf: fresh)
            app.lastSequence = last.sequence
            app.droppedByApp += fresh.reduce(0) { $0 + ($1.kind == .dropped ? $1.dropped ?? 0 : 0) }
            let excess = app.records.count - capacity
            if excess > 0 {
                app.records.removeFirst(excess)
                app.dropped += excess
            }
            state.apps[id] = app
            broadcast(PageMessage(records: .init(app: id, records: fresh)), in: &state)
            if excess > 0 { broadcastApps(&state) }
        }
    }

    /// Shows an app's answer to a skip to every page.
    func recomputed(_ answer: Recomputed, of id: Int) {
        state.withLock { state in
            broadcast(PageMessage(recomputed: .init(app: id, recomputed: answer)), in: &state)
        }
    }

    /// Shows an app's answer to an event sent to it to every page.
    func dispatched(_ status: DispatchStatus, of id: Int) {
        state.withLock { state in
            broadcast(PageMessage(dispatched: .init(app: id, system: status.system, problem: status.problem)), in: &state)
        }
    }

    /// Shows an app's answer to a preview request to every page.
    func previewStatus(_ status: PreviewStatus, of id: Int) {
        state.withLock { state in
            state.previews[id, default: [:]][status.system] = status.sequence
            let message = PageMessage.AppPreviewStatus(app: id, system: status.system, sequence: status.sequence, problem: status.problem)
            broadcast(PageMessage(previewStatus: message), in: &state)
        }
    }

    // MARK: Pages

    /// A page connected: it is sent the apps and everything held of each, then what comes.
    /// Returns its id.
    func pageConnected(outbox: PageOutbox) -> Int {
        state.withLock { state in
            state.lastID += 1
            let id = state.lastID
            state.pages[id] = outbox
            send(PageMessage(apps: summaries(state)), to: id, in: &state)
            for (appID, app) in state.apps.sorted(by: { $0.key < $1.key }) {
                // In slices, so that no frame is huge.
                var start = app.records.startIndex
                while start < app.records.endIndex {
                    let end = min(start + 2_000, app.records.endIndex)
                    send(PageMessage(records: .init(app: appID, records: Array(app.records[start..<end]))), to: id, in: &state)
                    start = end
                }
            }
            for (appID, systems) in state.previews {
                for (system, sequence) in systems {
                    let status = PageMessage.AppPreviewStatus(app: appID, system: system, sequence: sequence, problem: nil)
                    send(PageMessage(previewStatus: status), to: id, in: &state)
                }
            }
            return id
        }
    }

    /// A page left. When it was the last, every preview ends: nobody is left to bring the apps
    /// back to their live states.
    func pageDisconnected(_ id: Int) {
        state.withLock { state in
            state.pages[id] = nil
            guard state.pages.isEmpty else { return }
            for (appID, systems) in state.previews {
                guard let outbox = state.apps[appID]?.connection?.outbox else { continue }
                for system in systems.keys {
                    outbox.yield(Self.text(InspectorCommand(endPreview: .init(system: system))))
                }
            }
        }
    }

    /// Carries out a page's request: it goes to its app, or the page is told, in the answer
    /// the app would have given, that the app is not connected.
    func handle(_ command: PageCommand, fromPage page: Int) {
        let absent = "the app is not connected"
        let (appID, forApp, refusal): (Int, InspectorCommand, PageMessage)
        if let preview = command.preview {
            (appID, forApp, refusal) = (
                preview.app, InspectorCommand(preview: .init(system: preview.system, sequence: preview.sequence)),
                PageMessage(previewStatus: .init(app: preview.app, system: preview.system, sequence: nil, problem: absent))
            )
        } else if let end = command.endPreview {
            (appID, forApp, refusal) = (
                end.app, InspectorCommand(endPreview: .init(system: end.system)),
                PageMessage(previewStatus: .init(app: end.app, system: end.system, sequence: nil, problem: absent))
            )
        } else if let skip = command.skip {
            (appID, forApp, refusal) = (
                skip.app, InspectorCommand(skip: .init(system: skip.system, sequence: skip.sequence)),
                PageMessage(recomputed: .init(app: skip.app, recomputed: Recomputed(system: skip.system, skipped: skip.sequence, problem: absent)))
            )
        } else if let dispatch = command.dispatch {
            (appID, forApp, refusal) = (
                dispatch.app, InspectorCommand(dispatch: .init(system: dispatch.system, event: dispatch.event)),
                PageMessage(dispatched: .init(app: dispatch.app, system: dispatch.system, problem: absent))
            )
        } else {
            return
        }
        state.withLock { state in
            guard let outbox = state.apps[appID]?.connection?.outbox else {
                send(refusal, to: page, in: &state)
                return
            }
            outbox.yield(Self.text(forApp))
        }
    }

    /// Ends every outbox: the server stops.
    func closeAll() {
        state.withLock { state in
            for page in state.pages.values { page.finish() }
            state.pages = [:]
            for id in state.apps.keys { state.apps[id]?.connection?.outbox.finish() }
        }
    }

    /// The apps as the page lists them.
    var apps: [PageMessage.AppSummary] {
        state.withLock { summaries($0) }
    }

    /// Forgets the apps that left longest ago while more than ``maximumApps`` are kept, so
    /// that an inspector left running through many launches of an app stays bounded.
    private func forgetAppsThatLeft(_ state: inout State) {
        let gone = state.apps.filter { $0.value.connection == nil }.keys.sorted()
        for id in gone.prefix(max(0, state.apps.count - Self.maximumApps)) {
            if let session = state.apps[id]?.hello.session { state.appBySession[session] = nil }
            state.apps[id] = nil
            state.previews[id] = nil
        }
    }

    // MARK: Sending

    private func summaries(_ state: State) -> [PageMessage.AppSummary] {
        state.apps.sorted { $0.key < $1.key }.map { id, app in
            PageMessage.AppSummary(
                id: id, app: app.hello.app, session: app.hello.session, connected: app.connection != nil,
                records: app.records.count, dropped: app.dropped, droppedByApp: app.droppedByApp, lastSequence: app.lastSequence,
                redaction: app.hello.redaction, clockBase: app.clockBase
            )
        }
    }

    private func broadcastApps(_ state: inout State) {
        broadcast(PageMessage(apps: summaries(state)), in: &state)
    }

    private func broadcast(_ message: PageMessage, in state: inout State) {
        guard !state.pages.isEmpty else { return }
        let text = Self.text(message)
        for id in Array(state.pages.keys) { send(text, to: id, in: &state) }
    }

    private func send(_ message: PageMessage, to page: Int, in state: inout State) {
        send(Self.text(message), to: page, in: &state)
    }

    /// Hands `text` to a page's outbox; a page that cannot keep up is closed.
    private func send(_ text: String, to page: Int, in state: inout State) {
        guard let outbox = state.pages[page], !outbox.offer(text) else { return }
        outbox.finish()
        state.pages[page] = nil
    }

    static func text(_ value: some Encodable) -> String {
        String(decoding: (try? JSONEncoder().encode(value)) ?? Data("{}".utf8), as: UTF8.self)
    }
}

extension PageMessage {
    init(apps: [AppSummary]) {
        self.apps = apps
    }

    init(records: AppRecords) {
        self.records = records
    }

    init(previewStatus: AppPreviewStatus) {
        self.previewStatus = previewStatus
    }

    init(dispatched: AppDispatchStatus) {
        self.dispatched = dispatched
    }

    init(recomputed: AppRecomputed) {
        self.recomputed = recomputed
    }
}
