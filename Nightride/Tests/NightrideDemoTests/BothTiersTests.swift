import Foundation
import InspectorTestSupport
import Logging
import NightrideClient
import NightrideModel
import NightrideServer
import StateLoopInspector
import StateLoopInspectorServer
import StateLoopInspectorWire
import TestSupport
import Testing

/// The inspector sees both tiers: a Nightride server and two clients on one page, a ride
/// request followed from the passenger's key press, through the server's request, commit and
/// push, to the driver's screen. Real sockets on loopback, headless Chromium, bounded waits.
/// `STATELOOP_INSPECTOR_SCREENSHOT=path` keeps a picture of the page and prints the chain.
@MainActor
@Suite("Nightride: client and server on one timeline", .serialized, .timeLimit(.minutes(4)))
struct BothTiersTests {
    @Test("a passenger's ride request is linked, in order, from the key press to the driver's screen through the server's commit and push")
    func rideRequestAcrossTiers() async throws {
        if let missing = HeadlessChromium.missing {
            Issue.record(Comment(rawValue: missing))
            return
        }
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let inspectorServer = try InspectorServer(configuration: .init(port: 0), logger: logger)
        try await inspectorServer.start()
        let appURL = try #require(inspectorServer.appURL)
        var configuration = NightrideServer.Configuration(port: 0, inactivityTimeout: nil, epoch: 1)
        configuration.inspector = Inspector.nightrideServer(connectingTo: appURL)
        let server = NightrideServer(configuration: configuration, logger: logger)
        let url = URL(string: "http://127.0.0.1:\(try await server.start())")!
        func client(_ name: String) async throws -> NightrideClient {
            let api = try await NightrideAPI.login(server: url, name: name, password: "\(name)-secret-password")
            return try NightrideClient(api: api, options: ClientOptions(inspector: Inspector.nightride(connectingTo: appURL)))
        }
        let annie = try await client("annie")
        let bobby = try await client("bobby")
        do {
            try await HeadlessChromium.using { browser in try await follow(annie: annie, bobby: bobby, in: browser, inspector: inspectorServer) }
        } catch {
            Issue.record(error)
        }
        // Whatever happened above: no browser, server or client is left behind.
        annie.stop()
        bobby.stop()
        await server.stop()
        await inspectorServer.stop()
    }

    /// The ride: bobby in driver mode, annie's request, then the chain on the page.
    private func follow(annie: NightrideClient, bobby: NightrideClient, in browser: HeadlessChromium, inspector inspectorServer: InspectorServer)
        async throws
    {

        bobby.perform(.toggleDriverMode)
        #expect(await eventually(within: .seconds(20)) { bobby.state.screen == .driverWaiting && !bobby.state.isOptimistic })
        #expect(await eventually(within: .seconds(20)) { annie.state.screen == .passengerRequesting && !annie.state.isOptimistic })
        let request = try #require(annie.perform(.requestRide(to: PlaceCatalog().search("gare", limit: 1)[0])))
        #expect(await eventually(within: .seconds(20)) { bobby.state.screen == .driverAccepting }, "bobby is offered the ride")
        #expect(await eventually(within: .seconds(20)) { !annie.state.isOptimistic }, "the request is confirmed")

        try await browser.navigate(to: try #require(inspectorServer.pageURL))
        // The three apps, their records in: the server's push of the offer to bobby among them.
        #expect(try await browser.waitFor("document.querySelectorAll('#apps li.app').length === 3"))
        #expect(
            try await browser.waitFor(
                "[...document.querySelectorAll('#apps li.app')].some(li => li.textContent.includes('Nightride server'))"))
        // Annie's app: the list names what each app holds (two apps are named Nightride).
        let findAnnie = """
            (() => {
              const li = [...document.querySelectorAll('#apps li.app')].find(li => li.querySelector('.app-systems')?.textContent.includes('client annie'));
              if (li) window.annieApp = li.dataset.appId;
              return li !== undefined;
            })()
            """
        #expect(try await browser.waitFor(findAnnie), "no app on the page holds client annie")
        guard case .string(let annieKey) = try await browser.evaluate("window.annieApp") else {
            throw HeadlessChromium.Failure(description: "annie's app not found")
        }
        // The request's mutation as it was queued: the chain goes back to the key press from it.
        _ = try await browser.evaluate(
            """
            (() => {
              document.querySelector('#apps li.app[data-app-id="\(annieKey)"]').click();
              const filter = document.querySelector('#text-filter');
              filter.value = '\(request.rawValue)';
              filter.dispatchEvent(new Event('input'));
            })()
            """)
        let queuedRow = "[...document.querySelectorAll('#timeline .record.kind-mutation')].find(e => e.textContent.includes('queued'))"
        #expect(try await browser.waitFor("\(queuedRow) !== undefined"))
        _ = try await browser.evaluate("\(queuedRow).click()")
        #expect(
            try await browser.waitFor(
                "[...document.querySelectorAll('#detail-links .link-row.stage-shown')].some(e => e.textContent.includes('client bobby'))",
                within: .seconds(20)),
            "the chain reaches the driver's screen")
        let chain = try await browser.evaluate(
            "[...document.querySelectorAll('#detail-links .link-row')].map(e => [e.className, e.querySelector('.link-time').textContent, e.textContent].join('|'))"
        )
        guard case .array(let rows) = chain else { throw HeadlessChromium.Failure(description: "\(chain)") }
        let lines = rows.compactMap { row -> (stage: String, ms: Int, text: String)? in
            guard case .string(let line) = row else { return nil }
            let parts = line.split(separator: "|", maxSplits: 2).map(String.init)
            guard parts.count == 3, let stage = parts[0].split(separator: " ").first(where: { $0.hasPrefix("stage-") }) else { return nil }
            return (String(stage.dropFirst("stage-".count)), Int(parts[1].dropFirst().dropLast(3)) ?? -1, parts[2])
        }
        let stages = lines.map(\.stage)
        if let path = ProcessInfo.processInfo.environment["STATELOOP_INSPECTOR_SCREENSHOT"] {
            try await browser.screenshot().write(to: URL(fileURLWithPath: path))
            for line in lines { print(line.stage, line.ms, line.text) }
        }
        func first(_ stage: String, where matches: (String) -> Bool = { _ in true }) -> Int? {
            lines.firstIndex { $0.stage == stage && matches($0.text) }
        }
        let press = try #require(first("press") { $0.contains("client annie") }, "\(stages)")
        let queued = try #require(first("queued") { $0.contains("ride annie") }, "\(stages)")
        let posted = try #require(first("request") { $0.contains("POST /me/ride") }, "\(lines.map(\.text))")
        let applied = try #require(first("applied") { $0.contains("applied") }, "\(lines.map(\.text))")
        let commit = try #require(first("commit") { $0.contains("ride/bobby") && $0.contains("ride/annie") }, "\(lines.map(\.text))")
        let push = try #require(first("push") { $0.contains("ride/bobby") }, "\(lines.map(\.text))")
        let received = try #require(first("received") { $0.contains("ride bobby") }, "\(lines.map(\.text))")
        let shown = try #require(first("shown") { $0.contains("client bobby") }, "\(lines.map(\.text))")
        #expect(press < queued && queued < applied && applied < commit && commit < push && push < received && received < shown, "\(stages)")
        #expect(posted > queued, "\(stages)")
        #expect(lines.map(\.ms) == lines.map(\.ms).sorted(), "the times run forward: \(lines.map(\.ms))")
        // A linked record of another app selects that app and the record.
        _ = try await browser.evaluate("document.querySelector('#detail-links .link-row.stage-push').click()")
        #expect(try await browser.waitFor("document.querySelector('#detail-title')?.textContent.includes('server')"))
        #expect(
            try await browser.waitFor("document.querySelector('#timeline .record.selected.kind-push') !== null"),
            "its row is shown and selected, the text filter that hid it cleared")
    }
}
