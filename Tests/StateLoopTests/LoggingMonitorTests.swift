import Logging
import StateLoop
import StateLoopLogging
import Synchronization
import Testing

/// Collects log lines in memory.
struct CapturingLogHandler: LogHandler {
    let lines: Shared<[String]>
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let details = (event.metadata ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        lines.update { $0.append("\(event.level) \(event.message) \(details.joined(separator: " "))") }
    }
}

@MainActor
@Suite("monitor and logging")
struct LoggingMonitorTests {
    @Test("the swift-log monitor logs every reduced event with its state, and discarded ones")
    func logsEvents() async {
        let lines = Shared<[String]>([])
        var logger = Logger(label: "test") { _ in CapturingLogHandler(lines: lines) }
        logger.logLevel = .trace
        let system = System(
            initialState: Counter(),
            reduce: Counter.reduce,
            monitor: LoggingMonitor(logger: logger)
        )
        system.send(.add(2))
        system.stop()
        system.send(.increment)
        #expect(lines.value.count == 2)
        #expect(lines.value[0].hasPrefix("debug reduced event event=add(2) source=sent state="))
        #expect(lines.value[0].contains("count: 2"))
        #expect(lines.value[1] == "trace discarded event event=increment reason=stopped")
    }

    @Test("a logger above the monitor's level formats nothing")
    func filteredByLevel() {
        let lines = Shared<[String]>([])
        var logger = Logger(label: "test") { _ in CapturingLogHandler(lines: lines) }
        logger.logLevel = .info
        let system = System(initialState: Counter(), reduce: Counter.reduce, monitor: LoggingMonitor(logger: logger))
        system.send(.increment)
        #expect(lines.value.isEmpty)
    }

    @Test("the monitor sees the source of every event")
    func sources() async {
        let log = EventLog<Counter, Counter.Event>()
        let system = System(
            initialState: Counter(),
            reduce: Counter.reduce,
            feedbacks: [.react(query: \.request) { .loaded($0) }],
            monitor: log
        )
        system.send(.ask(1))
        #expect(await yieldUntil { system.state.loaded == [1] })
        #expect(log.reduced.map(\.source) == [.sent, .effect])
    }
}
