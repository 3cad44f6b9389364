import Foundation
import StateLoopInspectorWire
import Testing

@testable import StateLoopInspectorServer

/// `stateloop-inspector make-test`'s writer: the checked-in Nightride test is what it writes
/// today, and a session or a name that does not fit is refused with the reason.
@Suite("inspector: a session becomes a test")
struct SessionTestWriterTests {
    private let nightride = SessionTestWriter(
        system: "client cid", module: "NightrideClient", stateType: "ClientState", eventType: "ClientEvent",
        reduce: "ClientState.reduce", name: "RideRequestedAndCancelled"
    )

    private var folder: URL {
        // Tests/StateLoopInspectorTests/ → the repository → Nightride's package.
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Nightride/Tests/NightrideDemoTests/RecordedSessions")
    }

    @Test("the checked-in Nightride test (run in Nightride's NightrideDemoTests) is what the writer makes of its fixture")
    func checkedInTestIsCurrent() throws {
        let fixture = folder.appendingPathComponent(nightride.fileNames.fixture)
        let session = try JSONDecoder().decode(InspectorSession.self, from: Data(contentsOf: fixture))
        let checkedIn = try String(contentsOf: folder.appendingPathComponent(nightride.fileNames.test), encoding: .utf8)
        #expect(try nightride.source(for: session) == checkedIn)
        // Twice: nothing in the encoding may depend on a set's order, which changes between runs.
        for _ in 0..<2 {
            #expect(
                try SessionTestWriter.fixture(for: session) == Data(contentsOf: fixture), "the fixture is written in a stable order, as checked in")
        }
    }

    @Test("an unknown system is refused naming the systems the session has; names that are not Swift are refused")
    func refusals() throws {
        let session = InspectorSession(
            app: "A", redaction: Redaction(fields: []),
            records: [
                InspectorRecord(sequence: 1, time: 0, system: "form", kind: .attached)
            ])
        var writer = nightride
        #expect(throws: SessionTestWriter.Refusal.self) { try writer.source(for: session) }
        do {
            _ = try writer.source(for: session)
        } catch {
            #expect(error.description.contains("\"form\""), "\(error)")
        }
        writer.system = "form"
        for (name, module, reduce) in [
            ("9lives", "M", "S.reduce"), ("Ok", "My-Module", "S.reduce"), ("Ok", "M", "S..reduce"), ("Ok", "M", "reduce()"),
        ] {
            writer.name = name
            writer.module = module
            writer.reduce = reduce
            #expect(throws: SessionTestWriter.Refusal.self, "\(name) \(module) \(reduce)") { try writer.source(for: session) }
        }
        writer.name = "Form_1"
        writer.module = "M"
        writer.reduce = "Form.reduce"
        let source = try writer.source(for: session)
        #expect(source.contains("struct Form_1SessionTests"))
        #expect(source.contains("check(system: \"form\", reduce: Form.reduce"))
    }

    @Test("quotes and backslashes in a system's name stay inside the test's string literals")
    func escaping() throws {
        let system = #"client "a\b""#
        let session = InspectorSession(
            app: "A", redaction: Redaction(fields: []),
            records: [
                InspectorRecord(sequence: 1, time: 0, system: system, kind: .attached)
            ])
        var writer = nightride
        writer.system = system
        let source = try writer.source(for: session)
        #expect(source.contains(#"check(system: "client \"a\\b\"", reduce:"#), "\(source)")
    }
}
