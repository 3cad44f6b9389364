import Foundation
import Logging
import NightrideClient
import NightrideHarness
import NightrideModel
import NightrideServer
import StateLoop
import StateLoopInspector
import StateLoopSync

/// The scripted Nightride scenario: a server with seeded faults, a passenger and a driver, a
/// ride requested, accepted, cancelled, the inactivity switch-off racing HTTP answers, a network
/// cut, then faults off; every screen either client shows is recorded and audited.
@MainActor
public final class DemoScenario {
    /// Settings of one run.
    public struct Options: Sendable {
        /// The seed of the server's faults.
        public var seed: UInt64
        /// Where the clients' journals go; a new folder by default.
        public var journalFolder: String
        /// Whether the run removes `journalFolder` when it ends: yes for the folder it made.
        public var removesJournalFolder: Bool
        /// Seconds a driver may idle before driver mode switches itself off.
        public var inactivity: Duration
        /// The longest any step may take before the run fails.
        public var stepTimeout: Duration
        /// A PostgreSQL database to run the server on, as ``instances`` instances (the passenger
        /// on the first, the driver on the last, so every push crosses instances); `nil` runs
        /// one server on a file in ``journalFolder``.
        public var postgresURL: String?
        /// How many server instances run on ``postgresURL``.
        public var instances: Int
        /// Records what every client does, for an inspector; `nil` records nothing.
        public var inspector: Inspector?
        /// Records what each server instance does (given its index), for the same inspector:
        /// each instance a source of its own; `nil` records nothing.
        public var serverInspector: (@Sendable (Int) -> Inspector)?

        /// A run with `seed`.
        public init(
            seed: UInt64 = 7, journalFolder: String? = nil, inactivity: Duration = .seconds(3), stepTimeout: Duration = .seconds(10),
            postgresURL: String? = nil, instances: Int = 2
        ) {
            self.postgresURL = postgresURL
            self.instances = postgresURL == nil ? 1 : max(1, instances)
            self.seed = seed
            self.journalFolder =
                journalFolder
                ?? FileManager.default.temporaryDirectory.appendingPathComponent("nightride-demo-\(UUID().uuidString)").path
            removesJournalFolder = journalFolder == nil
            self.inactivity = inactivity
            self.stepTimeout = stepTimeout
        }
    }

    private let options: Options
    private let log: (String) -> Void
    /// The server's instances in their harnesses: one, unless it runs on PostgreSQL.
    private var harnesses: [ServerHarness] = []
    /// The first instance: the server-side actions go through it, and its truth (read from the
    /// feed every instance commits to) is the truth.
    private var harness: ServerHarness { harnesses[0] }
    private var clients: [NightrideClient] = []
    private var screenLog: ScreenLog!
    private var convergence: [(fault: String, time: Duration)] = []
    private var failures: [String] = []

    /// A scenario that reports each line of its transcript to `log`.
    public init(options: Options, log: @escaping (String) -> Void) {
        self.options = options
        self.log = log
    }

    /// Runs the scenario; the report says whether the verdict holds.
    public func run() async throws -> DemoReport {
        try FileManager.default.createDirectory(atPath: options.journalFolder, withIntermediateDirectories: true)
        harnesses = (0..<options.instances).map { index in
            ServerHarness(
                configuration: configuration(instance: index), faults: faults(instance: index),
                logger: {
                    var logger = Logger(label: "nightride.server")
                    logger.logLevel = .warning
                    return logger
                }())
        }
        var urls: [URL] = []
        for harness in harnesses {
            urls.append(URL(string: "http://127.0.0.1:\(try await harness.server.start())")!)
        }
        let place = options.postgresURL == nil ? "" : ", \(harnesses.count) instances on PostgreSQL"
        log(
            "Nightride server on \(urls.map(\.absoluteString).joined(separator: " and "))\(place), faults on (seed \(options.seed)): latency 5–250 ms, 20 % of pushes lost, sockets cut every 2–6 s"
        )
        screenLog = ScreenLog(now: { [harness] in harness.now }) { [log] shown, previous in
            let from = previous.map { "\($0.title) → " } ?? ""
            log(
                String(
                    format: "%7.3fs  %@  %@%@%@", shown.time.seconds, shown.user.padding(toLength: 4, withPad: " ", startingAt: 0), from,
                    shown.screen.title, shown.isOptimistic ? "  (optimistic)" : ""))
        }
        defer { screenLog.stop() }
        let started = ContinuousClock.now
        do {
            try await play(urls: urls)
        } catch {
            failures.append("\(error)")
        }
        let report = await makeReport(duration: ContinuousClock.now - started)
        for client in clients {
            client.stop()
        }
        for harness in harnesses {
            await harness.server.stop()
        }
        if options.removesJournalFolder {
            try? FileManager.default.removeItem(atPath: options.journalFolder)
        }
        return report
    }

    /// The configuration of instance `index`: its data on a file, or on the database.
    private func configuration(instance index: Int) -> NightrideServer.Configuration {
        var configuration = NightrideServer.Configuration(
            dataPath: options.postgresURL == nil ? options.journalFolder + "/server.sqlite" : nil,
            postgresURL: options.postgresURL,
            durability: .processCrash,
            port: 0,
            inactivityTimeout: options.inactivity,
            loginLimits: .scriptedClients,
            passwordCost: 4
        )
        configuration.inspector = options.serverInspector?(index)
        return configuration
    }

    /// The faults of instance `index`, on from the start.
    private func faults(instance index: Int) -> FaultPlan {
        FaultPlan(
            seed: options.seed &+ UInt64(index),
            latency: .milliseconds(5)...(.milliseconds(250)),
            pushDropProbability: 0.2,
            disconnectAfter: .seconds(2)...(.seconds(6))
        )
    }

    /// Where the client at `index` reaches the server: the passenger the first instance, the
    /// driver the last.
    private var urls: [URL] = []

    private func url(forClient index: Int) -> URL {
        index == 0 ? urls[0] : urls[urls.count - 1]
    }

    // MARK: The script

    private func play(urls: [URL]) async throws {
        self.urls = urls
        let ann = try await connect("ann", to: url(forClient: 0))
        let bob = try await connect("bob", to: url(forClient: 1))
        let place = PlaceCatalog().search("gare", limit: 1).first!

        try await step("bob switches driver mode on") {
            bob.perform(.toggleDriverMode)
        } until: {
            bob.state.screen == .driverWaiting && !bob.state.isOptimistic && ann.state.screen == .passengerRequesting
        }
        try await step("ann asks for a ride to \(place.name)") {
            ann.perform(.requestRide(to: place))
        } until: {
            ann.state.screen == .passengerWaiting && !ann.state.isOptimistic && bob.state.screen == .driverAccepting
        }
        try await step("bob accepts") {
            bob.perform(.acceptRide)
        } until: {
            ann.state.screen == .passengerDriverComing && bob.state.screen == .driverGoingToPassenger && !bob.state.isOptimistic
        }
        try await step("ann cancels; the server frees bob, who learns it by push only") {
            ann.perform(.cancelRide)
        } until: {
            ann.state.screen == .passengerRequesting && !ann.state.isOptimistic && bob.state.screen == .driverWaiting
        }
        try await step("bob idles: driver mode switches itself off while his refreshes are in flight") {
            // Pulls keep leaving while the server's timer fires, so slow answers carrying the
            // old driver mode arrive after the push that switched it off.
            for _ in 0..<12 {
                bob.refresh()
                try await Task.sleep(for: .milliseconds(150))
            }
        } until: {
            bob.state.screen == .passengerRequesting && !bob.state.isOptimistic
        }
        try await step("bob back on, a second ride, driven to the end") {
            bob.perform(.toggleDriverMode)
        } until: {
            bob.state.screen == .driverWaiting && !bob.state.isOptimistic
        }
        try await step("ann asks again") {
            ann.perform(.requestRide(to: place))
        } until: {
            bob.state.screen == .driverAccepting && ann.state.screen == .passengerWaiting && !ann.state.isOptimistic
        }
        try await step("bob accepts and arrives") {
            bob.perform(.acceptRide)
            bob.perform(.arrive)
        } until: {
            ann.state.screen == .riding && bob.state.screen == .riding && !bob.state.isOptimistic
        }
        try await step("bob finishes the ride") {
            bob.perform(.finishRide)
        } until: {
            ann.state.screen == .survey && !bob.state.isOptimistic
        }
        try await step("network cut: sockets closed, requests refused, and the server changes meanwhile") {
            for harness in harnesses { harness.isNetworkCut = true }
            try await Task.sleep(for: .milliseconds(400))
            // The survey is skipped server-side while ann cannot hear it.
            try await harness.server.perform(.finishSurvey, for: "ann")
            try await Task.sleep(for: .milliseconds(400))
            for harness in harnesses { harness.isNetworkCut = false }
        } until: {
            true
        }
        try await converge(after: "network cut")

        try await step("the server switches bob's driver mode off while pushes are still being lost") {
            try await harness.server.setDriverMode(false, for: "bob")
            log("— faults off —")
            for harness in harnesses { harness.faultsEnabled = false }
        } until: {
            true
        }
        try await converge(after: "faults off")
        try await step("bob back on") {
            bob.perform(.toggleDriverMode)
        } until: {
            bob.state.screen == .driverWaiting && !bob.state.isOptimistic
        }
        try await step("a last ride on a quiet network: ann asks, bob accepts") {
            ann.perform(.requestRide(to: place))
            try await waitUntil("bob is offered the ride") { bob.state.screen == .driverAccepting }
            bob.perform(.acceptRide)
        } until: {
            ann.state.screen == .passengerDriverComing && bob.state.screen == .driverGoingToPassenger && !bob.state.isOptimistic
        }
        try await restartServer(driver: bob)
        try await revokeSessions()
    }

    /// The server restarts in the middle of the ride, its data on disk: both clients keep the
    /// ride and their sessions (no sign-in), and the driver's next step reaches both.
    private func restartServer(driver: NightrideClient) async throws {
        log(
            harnesses.count == 1
                ? "▶ the server restarts mid-ride; its data is on disk" : "▶ the driver's instance restarts mid-ride; the data is in PostgreSQL")
        let start = ContinuousClock.now
        try await harnesses[harnesses.count - 1].server.restart()
        driver.perform(.arrive)
        try await waitUntil("the driver's arrival reaches both, nobody signed out") {
            clients.allSatisfy { $0.state.screen == .riding && !$0.state.isOptimistic && !$0.state.isSignedOut }
        }
        let time = ContinuousClock.now - start
        convergence.append(("server restart: ride kept", time))
        log(String(format: "  both clients on with the ride %.0f ms after the restart, without signing in", time.seconds * 1_000))
    }

    /// Every session is revoked (a sign-out everywhere): both clients must say "signed out"
    /// (not offline, not the ride as if nothing happened), sign in again on the same journals,
    /// and show the ride as the server has it.
    private func revokeSessions() async throws {
        log("▶ the server revokes every session")
        let start = ContinuousClock.now
        // Every instance: the sessions are shared, each closes its own sockets.
        for harness in harnesses {
            try await harness.server.revokeSessions()
        }
        try await waitUntil("both clients signed out") { clients.allSatisfy(\.state.isSignedOut) }
        // The truth of a server that ended every session is "signed out": shown without a key press.
        convergence.append(("sessions revoked: signed out", ContinuousClock.now - start))
        log(String(format: "  both clients signed out %.0f ms after the revocation", (ContinuousClock.now - start).seconds * 1_000))
        for index in clients.indices {
            let name = clients[index].api.user
            clients[index].stop()
            clients[index] = try await makeClient(name, to: url(forClient: index))
            screenLog.watch(clients[index])
            log("  \(name) signs in again")
        }
        try await converge(after: "signing in again")
        try await waitUntil("the ride, as the server has it") {
            clients.allSatisfy { $0.state.screen == .riding }
        }
    }

    /// The demo's policy: a poll every second heals a lost push fast.
    static var policy: ResourcePolicy {
        var policy = ClientOptions.demoPolicy
        policy.pollInterval = .seconds(1)
        return policy
    }

    // MARK: Steps

    struct StepTimedOut: Error, CustomStringConvertible {
        let step: String
        let states: String
        var description: String { "step \"\(step)\" did not complete in time; \(states)" }
    }

    private func connect(_ name: String, to url: URL) async throws -> NightrideClient {
        let client = try await makeClient(name, to: url)
        clients.append(client)
        screenLog.watch(client)
        return client
    }

    /// The password the scripted clients sign `name` up and in with.
    public static func password(of name: String) -> String {
        "\(name)-pass"
    }

    /// A client of `name`, signed in, on its journal (the same one after a new sign-in).
    private func makeClient(_ name: String, to url: URL) async throws -> NightrideClient {
        let api = try await NightrideAPI.login(server: url, name: name, password: Self.password(of: name))
        return try NightrideClient(
            api: api,
            options: ClientOptions(journalPath: options.journalFolder + "/\(name).journal", policy: Self.policy, inspector: options.inspector)
        )
    }

    private func step(
        _ title: String,
        _ action: () async throws -> Void,
        until condition: () async throws -> Bool
    ) async throws {
        log("▶ \(title)")
        try await action()
        try await waitUntil(title, condition)
    }

    private func waitUntil(_ title: String, _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + options.stepTimeout
        while try await !condition() {
            guard ContinuousClock.now < deadline else {
                throw StepTimedOut(
                    step: title, states: clients.map { "\($0.state.user): \($0.state.screen) \($0.state.statusLine)" }.joined(separator: ", "))
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Waits until every client shows exactly the server's newest versions, with nothing
    /// pending, and records how long that took.
    private func converge(after fault: String) async throws {
        let start = ContinuousClock.now
        try await waitUntil("converge after \(fault)") {
            let truth = try await harness.truth()
            return clients.allSatisfy { $0.showsNewest(of: truth) }
        }
        let time = ContinuousClock.now - start
        convergence.append((fault, time))
        log(String(format: "  converged %.0f ms after %@", time.seconds * 1_000, fault))
    }

    // MARK: Verdict

    private func makeReport(duration: Duration) async -> DemoReport {
        // The screens before the truth: a screen of a change the server made after the truth was
        // read would name a version it "never had".
        let screens = Dictionary(uniqueKeysWithValues: clients.map { ($0.api.user, screenLog.screens(of: $0.api.user)) })
        let log: ChangeLog
        do {
            log = try await harness.truth().changeLog
        } catch {
            failures.append("the truth could not be read: \(error)")
            log = ChangeLog()
        }
        var rows: [DemoReport.ClientRow] = []
        for client in clients {
            let shown = screens[client.api.user] ?? []
            rows.append(
                DemoReport.ClientRow(
                    user: client.api.user,
                    screensShown: shown.count,
                    optimisticScreens: shown.filter(\.isOptimistic).count,
                    violations: ScreenAudit.violations(in: shown, log: log, staleAfter: DemoReport.convergenceBound),
                    requests: client.requestsStarted,
                    eventsJournaled: client.journal?.health.lastSequence ?? 0
                )
            )
        }
        return DemoReport(
            seed: options.seed,
            clients: rows,
            convergence: convergence.map { DemoReport.Convergence(fault: $0.fault, time: $0.time) },
            subscribersPerResource: NightrideClient.subscribersPerResource,
            serverStats: ServerStats.total(of: harnesses.map(\.stats)),
            failures: failures,
            duration: duration
        )
    }
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
