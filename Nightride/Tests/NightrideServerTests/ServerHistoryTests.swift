import Foundation
import Logging
import NightrideModel
@testable import NightrideServer
import StateLoopServer
import StateLoopWire
import Testing
import TestSupport

/// The change log and the mutation audit come from the store's change feed, so a server process
/// started on an earlier one's file knows the whole history, at the times it happened.
@Suite("Nightride server: history from the store", .serialized, .timeLimit(.minutes(2)))
struct ServerHistoryTests {
    @Test("a server started on an earlier server's file has its change log, at the same times, and its audit")
    func historyOutlivesTheServer() async throws {
        let (path, logger) = try dataFile()
        defer { removeDataFile(path) }
        let configuration = NightrideServer.Configuration(dataPath: path, passwordCost: 4)

        let first = NightrideServer(configuration: configuration, logger: logger)
        let port = try await first.start()
        let client = LoopbackClient(port: port)
        let token = try await client.login("bob")
        let (status, _) = try await client.send("POST", "/me/driver-mode", token: token, body: DriverModeChange(on: true), mutationID: "bob-phone:1")
        #expect(status == 200)
        try await first.setDriverMode(false, for: "bob")
        let before = first.changeLog
        let beforeTruth = first.truth
        await first.stop()

        let second = NightrideServer(configuration: configuration, logger: logger)
        let after = second.changeLog.records(of: "bob")
        // The earlier server's times, carried to the new server's clock: the same instants.
        let shift = second.wallOrigin - first.wallOrigin
        #expect(after.map(\.version) == before.records(of: "bob").map(\.version))
        #expect(after.filter { $0.resource == .driverMode }.map(\.value) == [.driverMode(false), .driverMode(true), .driverMode(false)])
        #expect(zip(after, before.records(of: "bob")).allSatisfy { $0.time == $1.time - shift })
        #expect(second.truth.driverMode(of: "bob") == beforeTruth.driverMode(of: "bob"))
        #expect(second.truth.audit.problem(with: "bob-phone:1", of: "bob") == nil)
        #expect(second.truth.audit.problem(with: "bob-phone:2", of: "bob") == "bob-phone:2 was never processed (lost)")
    }

    @Test("a server that keeps no history reads none of its file's feed at start and holds nothing per commit")
    func noHistoryKept() async throws {
        let (path, logger) = try dataFile()
        defer { removeDataFile(path) }

        let first = NightrideServer(configuration: NightrideServer.Configuration(dataPath: path, passwordCost: 4), logger: logger)
        let port = try await first.start()
        let token = try await LoopbackClient(port: port).login("bob")
        for index in 0..<50 { try await first.setDriverMode(index % 2 == 0, for: "bob") }
        #expect(first.changeLog.records(of: "bob").count > 50)
        await first.stop()

        let lean = NightrideServer(
            configuration: NightrideServer.Configuration(
                dataPath: path, passwordCost: 4, keepsHistory: false, changeRetention: .seconds(86_400), clientRetention: .seconds(86_400)
            ),
            logger: logger
        )
        let leanPort = try await lean.start()
        #expect(lean.changeLog.records.isEmpty, "the feed was not read at start")
        for index in 0..<50 { try await lean.setDriverMode(index % 2 == 0, for: "bob") }
        #expect(lean.changeLog.records.isEmpty, "nothing recorded per commit")
        // It serves as before: the data, the sessions and the versions are the file's.
        let (status, body) = try await LoopbackClient(port: leanPort).send("GET", "/me/driver-mode", token: token)
        #expect(status == 200)
        let value = try JSONDecoder().decode(Versioned<Bool>.self, from: body)
        #expect(value.value == false && value.version.counter > 100)
        await lean.stop()
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
            configuration: NightrideServer.Configuration(dataPath: path, passwordCost: 4, keepsHistory: false, changeRetention: .milliseconds(1)),
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
