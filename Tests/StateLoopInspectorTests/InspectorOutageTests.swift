import Foundation
import Logging
import TestSupport
import Testing

@testable import StateLoopInspector

/// What an app's log says when its inspector goes away: once per outage, never the token.
@Suite("inspector: the app's log of its connection")
struct InspectorOutageTests {
    @Test("once when the inspector goes away or never answers, not at each retry; again after it was back")
    func oncePerOutage() {
        var report = OutageReport(address: InspectorLink.address(of: "ws://127.0.0.1:7357/app?token=secret"))
        #expect(report.address == "ws://127.0.0.1:7357/app", "the token stays out of the log")
        #expect(
            report.ended(welcomed: false)
                == "no inspector answers at ws://127.0.0.1:7357/app: the app keeps its latest records and tries again every few seconds")
        #expect(report.ended(welcomed: false) == nil)
        #expect(report.ended(welcomed: false) == nil)
        // Back, then gone: said once more.
        #expect(
            report.ended(welcomed: true)
                == "the inspector at ws://127.0.0.1:7357/app went away: the app keeps its latest records and sends them when it is back")
        #expect(report.ended(welcomed: false) == nil)
        #expect(report.ended(welcomed: true) != nil)
    }

    @Test("an app given an inspector address where none listens says so in its log, without the token")
    func noInspectorSaysSo() async throws {
        let recorder = LogRecorder(level: .warning)
        let inspector = Inspector(app: "Test")
        // A port nothing listens on (discard).
        inspector.connect(to: "ws://127.0.0.1:9/app?token=secret", logger: Logger(label: "test") { _ in recorder })
        defer { inspector.disconnect() }
        let said = await eventually(within: .seconds(60)) { recorder.messages.contains { $0.contains("no inspector answers") } }
        #expect(said, "no line in 60 s (a hang guard): \(recorder.messages)")
        #expect(recorder.messages.filter { $0.contains("no inspector answers at ws://127.0.0.1:9/app") }.count == 1)
        #expect(!recorder.messages.joined().contains("secret"))
    }
}
