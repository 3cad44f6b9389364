import Foundation
import Logging
import NightrideModel
import StateLoopServer
import StateLoopWire
import TestSupport
import Testing

@testable import NightrideHarness
@testable import NightrideServer

/// The change log and the mutation audit are read from the store's change feed when asked, so a
/// server process started on an earlier one's file knows the whole history, at the times it
/// happened, and the server itself holds nothing per commit.
@Suite("Nightride server: history from the store", .serialized, .timeLimit(.minutes(5)))
struct ServerHistoryTests {
    @Test("a server started on an earlier server's file has its change log, at the same times, and its audit")
    func historyOutlivesTheServer() async throws {
        let (path, logger) = try dataFile()
        defer { removeDataFile(path) }
        let configuration = NightrideServer.Configuration(dataPath: path, passwordCost: 4)

        let first = ServerHarness(configuration: configuration, logger: logger)
        let port = try await first.server.start()
        let client = LoopbackClient(port: port)
        let token = try await client.login("bob")
        let (status, _) = try await client.send("POST", "/me/driver-mode", token: token, body: DriverModeChange(on: true), mutationID: "bob-phone:1")
        #expect(status == 200)
        try await first.server.setDriverMode(false, for: "bob")
        let before = try await first.truth()
        await first.server.stop()

        let second = ServerHarness(configuration: configuration, logger: logger)
        try await second.server.start()
        let truth = try await second.truth()
        await second.server.stop()
        let after = truth.changeLog.records(of: "bob")
        // The earlier server's times, carried to the new server's clock: the same instants.
        let shift = second.server.wallOrigin - first.server.wallOrigin
        #expect(after.map(\.version) == before.changeLog.records(of: "bob").map(\.version))
        #expect(after.filter { $0.resource == .driverMode }.map(\.value) == [.driverMode(false), .driverMode(true), .driverMode(false)])
        #expect(zip(after, before.changeLog.records(of: "bob")).allSatisfy { $0.time == $1.time - shift })
        #expect(truth.driverMode(of: "bob") == before.driverMode(of: "bob"))
        #expect(truth.audit.problem(with: "bob-phone:1", of: "bob") == nil)
        #expect(truth.audit.problem(with: "bob-phone:2", of: "bob") == "bob-phone:2 was never processed (lost)")
    }

    @Test(
        "the truth is read when asked, on from where the last read stopped: every change once, across restarts on a file (one feed) and in memory (a feed each)"
    )
    func truthReadOnDemand() async throws {
        let (path, logger) = try dataFile()
        defer { removeDataFile(path) }
        for configuration in [NightrideServer.Configuration(dataPath: path, passwordCost: 4), NightrideServer.Configuration(passwordCost: 4)] {
            let harness = ServerHarness(configuration: configuration, logger: logger)
            try await harness.server.start()
            var expected: [Bool] = [false]
            func toggle(_ count: Int) async throws {
                for _ in 0..<count {
                    expected.append(!expected.last!)
                    try await harness.server.setDriverMode(expected.last!, for: "bob")
                }
            }
            func modes() async throws -> [Bool] {
                try await harness.truth().changeLog.records(of: "bob").compactMap { record in
                    if case .driverMode(let on) = record.value { on } else { nil }
                }
            }
            _ = try await LoopbackClient(port: harness.server.port!).login("bob")
            try await toggle(3)
            #expect(try await modes() == expected)
            // Read again with nothing new, then after more changes: nothing twice.
            #expect(try await modes() == expected)
            try await toggle(2)
            // Two readers at once: neither logs what the other read.
            async let one = modes()
            async let two = modes()
            #expect(try await [one, two] == [expected, expected])
            // A restart between reads: what the first life committed after the last read is
            // still read (in memory, from the store it left), then the second life's.
            try await toggle(2)
            try await harness.server.restart()
            if configuration.dataPath == nil {
                // Memory lost: bob is new again in the new life.
                _ = try await LoopbackClient(port: harness.server.port!).login("bob")
                expected.append(false)
            }
            try await toggle(2)
            #expect(try await modes() == expected, "\(configuration.dataPath == nil ? "in memory" : "on a file")")
            await harness.server.stop()
        }
    }

    @Test("a running server prunes its file's change feed as configured (the newest commit stays)")
    func feedPruned() async throws {
        let (path, logger) = try dataFile()
        defer { removeDataFile(path) }

        let first = NightrideServer(configuration: NightrideServer.Configuration(dataPath: path, passwordCost: 4), logger: logger)
        _ = try await LoopbackClient(port: try await first.start()).login("bob")
        for index in 0..<20 { try await first.setDriverMode(index % 2 == 0, for: "bob") }
        await first.stop()
        let written = try SQLiteStore(path: path).changes(after: 0, limit: 1_000)
        #expect(written.count > 20)

        // Every commit but the newest is older than a millisecond by the time this one starts.
        let pruning = NightrideServer(
            configuration: NightrideServer.Configuration(dataPath: path, passwordCost: 4, changeRetention: .milliseconds(1)),
            logger: logger
        )
        try await pruning.start()
        let pruned = await eventually(within: .seconds(10)) {
            try? await Task.sleep(for: .milliseconds(50))
            return ((try? SQLiteStore(path: path).changes(after: 0, limit: 1_000).count) ?? .max) < written.count
        }
        await pruning.stop()
        #expect(pruned, "the feed was not pruned")
        let left = try SQLiteStore(path: path).changes(after: 0, limit: 1_000)
        #expect(left.last?.sequence == written.last?.sequence, "the newest commit went too")
    }

    @Test("the audit names a mutation applied in two commits of one epoch, and one beyond its client's progress")
    func auditFindsProblems() {
        var audit = MutationAudit()
        let cause = ChangeCause(scope: "ann", mutation: MutationID(rawValue: "c:1"))
        audit.noteApplied(cause, commit: 4, epoch: 9)
        audit.noteApplied(cause, commit: 4, epoch: 9)  // the same commit seen twice: once
        audit.noteProgress(ClientProgress(scope: "ann", client: ClientID(rawValue: "c"), lastMutationID: 2))
        audit.noteProgress(ClientProgress(scope: "ann", client: ClientID(rawValue: "c"), lastMutationID: 1))  // never back
        #expect(audit.problem(with: "c:1", of: "ann") == nil)
        #expect(audit.problem(with: "c:2", of: "ann") == nil)
        #expect(audit.problem(with: "c:3", of: "ann") == "c:3 was never processed (lost)")
        #expect(audit.problem(with: "c:1", of: "bob") == "c:1 was never processed (lost)")
        audit.noteApplied(cause, commit: 7, epoch: 10)  // a store in memory lost it: applied again, later epoch
        #expect(audit.problem(with: "c:1", of: "ann") == nil)
        audit.noteApplied(cause, commit: 8, epoch: 10)
        #expect(audit.problem(with: "c:1", of: "ann") == "c:1 was applied twice in one epoch")
    }

    /// A data file's path in a new temporary folder, and a logger for the servers on it.
    private func dataFile() throws -> (path: String, logger: Logger) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nightride-history-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var logger = Logger(label: "nightride.test")
        logger.logLevel = .error
        return (folder.appendingPathComponent("server.sqlite").path, logger)
    }

    /// Removes the folder of a ``dataFile()``.
    private func removeDataFile(_ path: String) {
        try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent)
    }
}
