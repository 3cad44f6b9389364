import Foundation
import InspectorTestSupport
import Logging
import StateLoop
import StateLoopInspector
import StateLoopInspectorServer
import StateLoopInspectorWire
import TestSupport
import Testing
import WSClient

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The inspector live: an app connected to a real `InspectorServer` over loopback, and a page
/// socket reading what the server shows.
@MainActor
@Suite("inspector: live", .timeLimit(.minutes(4)))
struct InspectorLiveTests {
    @Test("records reach a page live, in order and redacted, those from before the connection first")
    func live() async throws {
        try await withInspectorServer { server in
            let inspector = Inspector(app: "Forms", redacting: ["password"])
            let (system, _) = InspectorTests().makeSystem(inspector)
            system.send(.typedName("ann"))
            system.send(.typedPassword(password: "hunter2"))
            inspector.connect(to: try #require(server.appURL), logger: quiet)
            defer { inspector.disconnect() }
            let page = TestPage(url: try pageSocket(server))
            defer { page.close() }
            let app = try await firstApp(on: page)
            #expect(await eventually(within: .seconds(10)) { page.records(of: app).count == 3 }, "\(page.records(of: app).count) records")
            system.send(.look("ann"))
            system.send(.typedName("bob"))
            #expect(await eventually(within: .seconds(10)) { page.records(of: app).count == 6 }, "\(page.records(of: app).map(\.kind))")
            let records = page.records(of: app)
            #expect(records.map(\.sequence) == Array(1...6))
            #expect(records.map(\.kind) == [.attached, .reduced, .reduced, .reduced, .effectStarted, .reduced])
            let text = String(decoding: try JSONEncoder().encode(records), as: UTF8.self)
            #expect(!text.contains("hunter2"), "the password reached the inspector")
            #expect(page.apps.first?["connected"] == .bool(true))
            #expect(inspector.isConnected)
            system.stop()
        }
    }

    @Test("a reconnection resumes after the last record the inspector holds: nothing lost, nothing twice")
    func reconnectionResumes() async throws {
        try await withInspectorServer { server in
            let inspector = Inspector(app: "Forms")
            let (system, _) = InspectorTests().makeSystem(inspector)
            let page = TestPage(url: try pageSocket(server))
            defer { page.close() }
            for round in 0..<3 {
                inspector.connect(to: try #require(server.appURL), logger: quiet)
                let app = try await firstApp(on: page)
                for index in 0..<5 { system.send(.typedName("\(round)-\(index)")) }
                // The attached record, each earlier round's six, and this round's five.
                let expected = 1 + 6 * round + 5
                #expect(
                    await eventually(within: .seconds(10)) { page.records(of: app).count == expected },
                    "round \(round): \(page.records(of: app).count)")
                inspector.disconnect()
                #expect(await eventually(within: .seconds(10)) { page.apps.first?["connected"] == .bool(false) }, "the app never showed as away")
                // Recorded while away: sent at the next connection.
                system.send(.typedName("away \(round)"))
            }
            inspector.connect(to: try #require(server.appURL), logger: quiet)
            defer { inspector.disconnect() }
            let records = try await recordsSettling(on: page, count: 1 + 3 * 5 + 3)
            #expect(records.map(\.sequence) == Array(1...UInt64(19)))
            system.stop()
        }
    }

    @Test("while no inspector listens, the oldest records go, and the page is told how many")
    func dropsWhileAway() async throws {
        try await withInspectorServer { server in
            let inspector = Inspector(app: "Forms", capacity: 8)
            let (system, _) = InspectorTests().makeSystem(inspector)
            for index in 0..<29 { system.send(.typedName("\(index)")) }
            inspector.connect(to: try #require(server.appURL), logger: quiet)
            defer { inspector.disconnect() }
            let page = TestPage(url: try pageSocket(server))
            defer { page.close() }
            let records = try await recordsSettling(on: page, count: 9)
            #expect(records.first?.kind == .dropped)
            #expect(records.first?.dropped == 22)
            #expect(records.dropFirst().map(\.sequence) == Array(23...30))
            system.stop()
        }
    }

    @Test("a page's preview reaches the app: its observers see the recorded state while the live one goes on, then live again")
    func preview() async throws {
        try await withInspectorServer { server in
            let inspector = Inspector(app: "Forms")
            let (system, _) = InspectorTests().makeSystem(inspector)
            var shown: [String] = []
            let subscription = system.observe { shown.append($0.name) }
            defer { subscription.cancel() }
            system.send(.typedName("ann"))
            system.send(.typedName("bob"))
            inspector.connect(to: try #require(server.appURL), logger: quiet)
            defer { inspector.disconnect() }
            let page = TestPage(url: try pageSocket(server))
            defer { page.close() }
            let app = try await firstApp(on: page)
            _ = try await recordsSettling(on: page, count: 3)
            page.preview(app: app, system: "form", sequence: 2)
            #expect(await eventually(within: .seconds(10)) { page.previews.count == 1 }, "no answer to the preview")
            #expect(page.previews.first?["sequence"] == .number(2))
            #expect(system.isPreviewing)
            #expect(shown.last == "ann", "the observer shows the state of record 2")
            system.send(.typedName("cat"))
            #expect(system.state.name == "cat")
            #expect(shown.last == "ann", "a live change does not replace the preview")
            page.endPreview(app: app, system: "form")
            #expect(await eventually(within: .seconds(10)) { page.previews.count == 2 }, "no answer to the end of the preview")
            #expect(page.previews.last?["sequence"] == nil)
            #expect(!system.isPreviewing)
            #expect(shown.last == "cat", "live again")
            system.stop()
        }
    }

    @Test(
        "an event the page sends reaches a system that accepts events, as the app would send it, and is recorded; a system that does not, a JSON that is no event of it and a system gone are answered with the reason"
    )
    func dispatch() async throws {
        try await withInspectorServer { server in
            let inspector = Inspector(app: "Forms")
            let (system, monitor) = InspectorTests().makeSystem(inspector)
            system.send(.typedName("ann"))
            inspector.connect(to: try #require(server.appURL), logger: quiet)
            defer { inspector.disconnect() }
            let page = TestPage(url: try pageSocket(server))
            defer { page.close() }
            let app = try await firstApp(on: page)
            // Not accepted yet: the answer says how to accept.
            page.dispatch(app: app, system: "form", event: #"{"typedName":{"_0":"eve"}}"#)
            #expect(await eventually(within: .seconds(10)) { page.dispatched.count == 1 }, "no answer")
            #expect(page.dispatched.first?["problem"].map { "\($0)".contains("acceptEvents(into:)") } == true, "\(page.dispatched)")
            #expect(system.state.name == "ann")

            monitor.acceptEvents(into: system)
            page.dispatch(app: app, system: "form", event: #"{"typedName":{"_0":"eve"}}"#)
            #expect(await eventually(within: .seconds(10)) { page.dispatched.count == 2 }, "no answer")
            #expect(page.dispatched.last?["problem"] == nil, "\(page.dispatched)")
            #expect(system.state.name == "eve", "sent as the app would send it")
            #expect(
                await eventually(within: .seconds(10)) {
                    page.records(of: app).contains { record in
                        guard record.kind == .reduced, record.source == "sent", case .object(let state)? = record.state else { return false }
                        return state["name"] == .string("eve")
                    }
                }, "recorded like any event")

            page.dispatch(app: app, system: "form", event: #"{"teleport":{}}"#)
            #expect(await eventually(within: .seconds(10)) { page.dispatched.count == 3 }, "no answer")
            #expect(page.dispatched.last?["problem"].map { "\($0)".contains("not an event of form") } == true, "\(page.dispatched)")
            #expect(system.state.name == "eve", "nothing sent")

            system.stop()
            page.dispatch(app: app, system: "form", event: #"{"typedName":{"_0":"zed"}}"#)
            #expect(await eventually(within: .seconds(10)) { page.dispatched.count == 4 }, "no answer")
            #expect(page.dispatched.last?["problem"].map { "\($0)".contains("has stopped") } == true, "\(page.dispatched)")
        }
    }

    @Test(
        "a skipped event: the later events reduced again from the state before it, without it, by the app's reducer, the app's state untouched; a record that is no event, or of no system, answered with the reason"
    )
    func skip() async throws {
        try await withInspectorServer { server in
            let inspector = Inspector(app: "Forms")
            let (system, _) = InspectorTests().makeSystem(inspector)
            system.send(.typedName("ann"))
            for found in ["1", "2", "3"] { system.send(.found(found)) }
            inspector.connect(to: try #require(server.appURL), logger: quiet)
            defer { inspector.disconnect() }
            let page = TestPage(url: try pageSocket(server))
            defer { page.close() }
            let app = try await firstApp(on: page)
            let records = try await recordsSettling(on: page, count: 5)
            let second = try #require(records.first { $0.kind == .reduced && $0.event == .object(["found": .object(["_0": .string("2")])]) })
            page.skip(app: app, system: "form", sequence: second.sequence)
            #expect(await eventually(within: .seconds(10)) { page.recomputed.count == 1 }, "no answer")
            let answer = try #require(page.recomputed.first)
            #expect(answer.problem == nil, "\(answer)")
            #expect(answer.states.map(\.sequence) == [second.sequence + 1], "the one event after it")
            if case .object(let state)? = answer.states.first?.state {
                #expect(state["found"] == .array([.string("1"), .string("3")]), "without the skipped event")
            } else {
                Issue.record("no state recomputed: \(answer)")
            }
            #expect(system.state.found == ["1", "2", "3"], "the app's state untouched")

            page.skip(app: app, system: "form", sequence: 1)
            page.skip(app: app, system: "nothing", sequence: second.sequence)
            #expect(await eventually(within: .seconds(10)) { page.recomputed.count == 3 }, "no answer")
            #expect(page.recomputed[1].problem?.contains("not an event it reduced") == true, "\(page.recomputed[1])")
            #expect(page.recomputed[2].problem?.contains("no system named nothing") == true, "\(page.recomputed[2])")
            system.stop()
        }
    }

    @Test("a preview of a record the app no longer keeps, or of a system it does not have, is answered with the reason")
    func previewRefused() async throws {
        try await withInspectorServer { server in
            let inspector = Inspector(app: "Forms", capacity: 4)
            let (system, _) = InspectorTests().makeSystem(inspector)
            for index in 0..<10 { system.send(.typedName("\(index)")) }
            inspector.connect(to: try #require(server.appURL), logger: quiet)
            defer { inspector.disconnect() }
            let page = TestPage(url: try pageSocket(server))
            defer { page.close() }
            let app = try await firstApp(on: page)
            page.preview(app: app, system: "form", sequence: 2)
            page.preview(app: app, system: "nothing", sequence: 10)
            #expect(await eventually(within: .seconds(10)) { page.previews.count == 2 }, "\(page.previews)")
            for status in page.previews {
                guard case .string(let problem)? = status["problem"] else {
                    Issue.record("no problem given: \(status)")
                    continue
                }
                #expect(problem.contains("no longer") || problem.contains("no system"), "\(problem)")
            }
            #expect(!system.isPreviewing)
            system.stop()
        }
    }

    @Test("without the token, the page, the app socket and the page socket are refused with 401")
    func tokenRequired() async throws {
        try await withInspectorServer { server in
            let port = try #require(server.port)
            for path in ["/", "/app", "/page", "/apps", "/?token=wrong", "/page?token=\(server.configuration.token)x"] {
                let (body, response) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)\(path)")!)
                let http = response as? HTTPURLResponse
                #expect(http?.statusCode == 401, "\(path)")
                if path == "/" || path == "/?token=wrong" {
                    // A browser sent to the page without its token is told how to get in.
                    let text = String(decoding: body, as: UTF8.self)
                    #expect(http?.value(forHTTPHeaderField: "Content-Type")?.hasPrefix("text/html") == true, "\(path)")
                    #expect(text.contains("needs the inspector's token") && text.contains("swift run stateloop-inspector"), "\(path): \(text)")
                    #expect(!text.contains(server.configuration.token), "the page never gives the token away")
                    #expect(!text.lowercased().contains("<script") && !text.lowercased().contains("style="), "nothing the page's policy blocks")
                }
            }
            let (_, script) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)/inspector.js")!)
            #expect((script as? HTTPURLResponse)?.statusCode == 200, "the script holds no data")
            let (page, answer) = try await URLSession.shared.data(from: URL(string: try #require(server.pageURL))!)
            #expect((answer as? HTTPURLResponse)?.statusCode == 200)
            #expect(String(decoding: page, as: UTF8.self).contains("inspector.js"))
            await #expect(throws: (any Error).self) {
                try await WebSocketClient.connect(url: "ws://127.0.0.1:\(port)/page", logger: quiet) { _, _, _ in }
            }
            await #expect(throws: (any Error).self) {
                try await WebSocketClient.connect(url: "ws://127.0.0.1:\(port)/app?token=nope", logger: quiet) { _, _, _ in }
            }
        }
    }

    // MARK: Helpers

    /// The first app's records once there are `count`, after a moment in which no more came.
    private func recordsSettling(on page: TestPage, count: Int) async throws -> [InspectorRecord] {
        let app = try await firstApp(on: page)
        #expect(await eventually(within: .seconds(10)) { page.records(of: app).count >= count }, "\(page.records(of: app).count) of \(count) records")
        try await Task.sleep(for: .milliseconds(100))
        return page.records(of: app)
    }
}
