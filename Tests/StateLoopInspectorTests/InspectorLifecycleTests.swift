import Foundation
import InspectorTestSupport
import Logging
import StateLoop
import StateLoopInspector
import StateLoopInspectorServer
import StateLoopInspectorWire
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The edges of a live inspector: previews that must end when nobody can end them, a released
/// inspector, a record too large for a frame, a start cancelled, many app launches.
@MainActor
@Suite("inspector: lifecycle", .timeLimit(.minutes(4)))
struct InspectorLifecycleTests {
    @Test(
        "a preview ends when the app disconnects, when the last page leaves, and a failed preview says what is still shown; a new page learns of a preview on"
    )
    func previewsEnd() async throws {
        try await withInspectorServer { server in
            let inspector = Inspector(app: "Forms")
            let (system, _) = InspectorTests().makeSystem(inspector)
            for name in ["ann", "bob"] { system.send(.typedName(name)) }
            inspector.connect(to: try #require(server.appURL), logger: quiet)
            let page = TestPage(url: try pageSocket(server))
            let app = try await firstApp(on: page)
            #expect(await eventually(within: .seconds(10)) { page.records(of: app).count == 3 })

            // A failed preview after a good one: the app still shows the good one, and says so.
            page.preview(app: app, system: "form", sequence: 2)
            page.preview(app: app, system: "form", sequence: 999)
            #expect(await eventually(within: .seconds(10)) { page.previews.count == 2 }, "\(page.previews)")
            #expect(page.previews.last?["sequence"] == .number(2) && page.previews.last?["problem"] != nil, "\(page.previews)")
            #expect(system.isPreviewing)

            // A page that connects now is told.
            let late = TestPage(url: try pageSocket(server))
            #expect(await eventually(within: .seconds(10)) { late.previews.contains { $0["sequence"] == .number(2) } }, "\(late.previews)")

            // Both pages leave: nobody can end the preview, so the inspector does.
            page.close()
            late.close()
            #expect(await eventually(within: .seconds(10)) { !system.isPreviewing }, "the app stayed on a past state with no page open")

            // A preview on, then the app disconnects: it shows its live state again.
            let again = TestPage(url: try pageSocket(server))
            defer { again.close() }
            #expect(await eventually(within: .seconds(10)) { !again.apps.isEmpty })
            again.preview(app: app, system: "form", sequence: 2)
            #expect(await eventually(within: .seconds(10)) { system.isPreviewing })
            inspector.disconnect()
            #expect(await eventually(within: .seconds(10)) { !system.isPreviewing }, "the app stayed on a past state after disconnecting")
            system.stop()
        }
    }

    @Test("a connected inspector the app releases ends its connection; the inspector lists the app as gone")
    func releasedInspector() async throws {
        try await withInspectorServer { server in
            var inspector: Inspector? = Inspector(app: "Forms")
            inspector?.connect(to: try #require(server.appURL), logger: quiet)
            weak let released = inspector
            let page = TestPage(url: try pageSocket(server))
            defer { page.close() }
            #expect(await eventually(within: .seconds(10)) { page.apps.first?["connected"] == .bool(true) })
            inspector = nil
            #expect(released == nil, "the link keeps the inspector alive")
            #expect(await eventually(within: .seconds(10)) { page.apps.first?["connected"] == .bool(false) }, "the connection outlived the inspector")
        }
    }

    @Test("a record too large for a message reaches the inspector with its state replaced by a note, and later records follow it")
    func oversizedRecord() async throws {
        try await withInspectorServer { server in
            let inspector = Inspector(app: "Forms")
            let (system, _) = InspectorTests().makeSystem(inspector)
            system.send(.typedName(String(repeating: "x", count: 9 << 20)))
            system.send(.typedName("small"))
            inspector.connect(to: try #require(server.appURL), logger: quiet)
            defer { inspector.disconnect() }
            let page = TestPage(url: try pageSocket(server))
            defer { page.close() }
            let app = try await firstApp(on: page)
            #expect(await eventually(within: .seconds(20)) { page.records(of: app).count == 3 }, "\(page.records(of: app).count) records")
            let big = page.records(of: app).first { $0.sequence == 2 }
            guard case .object(let note)? = big?.state else {
                Issue.record("no state on the large record")
                return
            }
            #expect(note["tooLarge"] != nil)
            #expect(page.records(of: app).last?.state.map { "\($0)" }?.contains("small") == true)
            system.stop()
        }
    }

    @Test("a start cancelled before it binds returns at once, and leaves nothing running")
    func cancelledStart() async throws {
        let server = try InspectorServer(configuration: .init(port: 0), logger: quiet)
        let start = Task { try await server.start() }
        start.cancel()
        _ = await start.result
        await server.stop()
        // Whatever the cancel caught, the server can start and stop again.
        try await server.start()
        await server.stop()
        #expect(server.port == nil)
    }

    @Test("an inspector left running through many app launches keeps the most recent apps only")
    func manyLaunches() async throws {
        try await withInspectorServer { server in
            for launch in 0..<40 {
                let inspector = Inspector(app: "launch \(launch)")
                inspector.connect(to: try #require(server.appURL), logger: quiet)
                #expect(await eventually(within: .seconds(10)) { inspector.isConnected }, "launch \(launch) never connected")
                inspector.disconnect()
            }
            let pageURL = try #require(server.pageURL)
            let url = try #require(URL(string: pageURL.replacingOccurrences(of: "/?token=", with: "/apps?token=")))
            let deadline = ContinuousClock.now + .seconds(10) * hangGuardScale
            var apps: [[String: JSONValue]] = []
            repeat {
                let (data, _) = try await URLSession.shared.data(from: url)
                guard case .array(let listed) = try JSONDecoder().decode(JSONValue.self, from: data) else { break }
                apps = listed.compactMap { if case .object(let app) = $0 { app } else { nil } }
            } while apps.count > 33 && ContinuousClock.now < deadline
            #expect(apps.count <= 33, "\(apps.count) apps kept")
            #expect(apps.contains { $0["app"] == .string("launch 39") })
        }
    }
}
