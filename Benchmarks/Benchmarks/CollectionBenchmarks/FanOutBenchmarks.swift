import Benchmark
import BenchmarkSupport
import Foundation
import Hummingbird
import Logging
import StateLoopServer
import StateLoopSync
import StateLoopSyncTransports
import StateLoopWire
import Synchronization

/// How many sockets subscribe to the collection in the fan-out benchmark.
let collectionSubscriberCount = 1_000

/// One row changed in a collection of 100,000 rows with 1,000 subscribers: a `SyncServer` in a
/// process of its own (this executable, started again as ``CollectionFanOutServer``), 1,000 light
/// sockets on the query of every row, each opened with the cookie of the current result (as a
/// device that did its first sync does). A round is one row's title written by the server's own
/// `update`, and ends when the 1,000th frame of it has arrived; it reports the payload bytes each
/// socket got. Beside it, in the same run, the baseline: the same rows as one value
/// (`[TaskRow]`) that every socket reads, one row of it changed. A value that large is never
/// pushed (it is over the kit's push limit): each socket gets a hint, and each reader must then
/// fetch the whole list; the round adds the list's JSON to each socket's bytes, and its time
/// ends at the last hint, before any of the 1,000 fetches.
func registerFanOutBenchmarks() {
    for asValue in [false, true] {
        let box = FixtureBox<SocketFleet>()
        Benchmark(
            asValue
                ? "Collections: one row changed, 1,000 subscribers, baseline: the 100,000 rows as one value"
                : "Collections: one row changed in 100,000, 1,000 subscribers",
            configuration: .init(
                metrics: [.wallClock, .fanOutLastFrame, .fanOutUpdate, .fanOutBytesPerSocket],
                warmupIterations: 1,
                scalingFactor: .one,
                maxDuration: .seconds(60),
                maxIterations: asValue ? 10 : 50
            ),
            closure: { benchmark in
                guard let fleet = box.current else { return }
                do {
                    let before = fleet.payloadBytes
                    let (lastFrame, update) = try await fleet.round { "\(asValue ? "value" : "row") \($0)" }
                    var bytes = (fleet.payloadBytes - before) / collectionSubscriberCount
                    if asValue {
                        // The GET each reader makes after the hint: the value's JSON.
                        let answer = try fleet.server.command("size")
                        guard let size = Int(answer) else { throw SetupFailure(message: "size: \(answer)") }
                        bytes += size
                    }
                    benchmark.measurement(.fanOutLastFrame, Int(lastFrame / .microseconds(1)))
                    benchmark.measurement(.fanOutUpdate, update)
                    benchmark.measurement(.fanOutBytesPerSocket, bytes)
                } catch {
                    benchmark.error("\(error)")
                }
            },
            setup: {
                let server = try ChildServer.launch(role: CollectionFanOutServer.roleVariable)
                let path: String
                if asValue {
                    path = "/board/push"
                } else {
                    // The cookie of the current result, as every device that synced holds it.
                    var logger = Logger(label: "collections.benchmark")
                    logger.logLevel = .critical
                    let endpoint = SyncEndpoint(
                        server: URL(string: "http://127.0.0.1:\(server.port)")!, bearerToken: "reader", logger: logger,
                        maximumResponseBytes: 256 << 20)
                    let first: RowsDifference<TaskRow> = try await endpoint.get("/tasks/all")
                    path = "/tasks/all/push?cookie=\(first.cookie)"
                }
                let fleet = try await SocketFleet.open(
                    on: server, authorizations: (0..<collectionSubscriberCount).map { "Bearer user-\($0)" }, path: path,
                    serverBefore: server.residentBytes)
                box.set(fleet)
            },
            teardown: { await box.take()?.stop() }
        )
    }
}

/// The fan-out benchmark's server process: a `SyncServer` on an in-memory SQLite store holding
/// 100,000 rows, served as the collection `tasks` (one query, `all`) and as one value,
/// `board`. Its commands, `row N` and `value N`, set row N's title in the collection or in the
/// value with `update`, and answer `done MICROSECONDS`: how long the write took, its pushes
/// queued; `size` answers the value's size as JSON.
enum CollectionFanOutServer {
    static let roleVariable = "STATELOOP_BENCHMARK_COLLECTION_SERVER"

    static let board = ServerResource("board", of: [TaskRow].self)
    static let all = CollectionQuery<String>("all") { _, _, _ in RowQuery(orderedBy: [.init("position")]) }

    /// Anyone with a bearer token is that token's principal, and reads everything.
    struct Everyone: AccessPolicy {
        func principal(for request: Request) async throws -> String? { request.bearerToken }
        func id(of user: String) -> String { user }
        func mayRead(_ key: ResourceKey, as user: String) -> Bool { true }
        func mayWrite(_ key: ResourceKey, as user: String) -> Bool { false }
    }

    /// The server process's whole life: called instead of registering benchmarks when the role
    /// variable is set.
    static func runAsServer() -> Never {
        raiseFileDescriptorLimit()
        var logger = Logger(label: "collections.benchmark")
        logger.logLevel = .critical
        guard let store = try? SQLiteStore() else { exit(1) }
        let server = SyncServer(store: store, access: Everyone(), logger: logger)
        server.serve(TaskRow.collection, at: "tasks", queries: [all])
        server.serve(board, at: "board") { _, _ in "all" }
        let rows = Locked((0..<100_000).map(TaskRow.numbered))
        let host = SyncHost(logger: logger) { port in .init(server, application: server.application(port: port)) }
        guard
            let port = try? runBlocking({
                try await server.update { transaction in
                    for row in rows.value { try transaction.write(row, to: TaskRow.collection) }
                    try transaction.write(rows.value, to: board, "all")
                }
                return try await host.start()
            })
        else {
            FileHandle.standardError.write(Data("the collection fan-out server did not start\n".utf8))
            exit(1)
        }
        ChildServer.serve(port: port) { line in
            if line == "size" { return "\((try? JSONEncoder().encode(rows.value).count) ?? 0)" }
            let words = line.split(separator: " ")
            guard words.count == 2, words[0] == "row" || words[0] == "value", let round = Int(words[1]) else {
                return "unknown command: \(line)"
            }
            do {
                let took = try runBlocking {
                    let start = ContinuousClock.now
                    let changed = rows.change { rows -> TaskRow in
                        rows[round % rows.count].title = "Task \(round % rows.count), round \(round)"
                        return rows[round % rows.count]
                    }
                    try await server.update { transaction in
                        if words[0] == "row" {
                            try transaction.write(changed, to: TaskRow.collection)
                        } else {
                            try transaction.write(rows.value, to: board, "all")
                        }
                    }
                    return start.duration(to: .now)
                }
                return "done \(Int(took / .microseconds(1)))"
            } catch {
                return "failed: \(error)"
            }
        }
    }
}

/// The server process's copy of the rows: changed by one command at a time.
final class Locked<Value: Sendable>: Sendable {
    private let stored: Mutex<Value>

    init(_ value: Value) { stored = Mutex(value) }

    var value: Value { stored.withLock { $0 } }

    func change<Result: Sendable>(_ body: (inout Value) -> Result) -> Result {
        stored.withLock { body(&$0) }
    }
}

extension BenchmarkMetric {
    /// From asking the server for the change to the last of the 1,000 frames: one sample per round.
    static let fanOutLastFrame = BenchmarkMetric.custom("Change to last of 1,000 frames (µs)", useScalingFactor: false)
    /// Inside the server process: the write, its commit and its pushes queued on every socket.
    static let fanOutUpdate = BenchmarkMetric.custom("Server write, queued on 1,000 sockets (µs)", useScalingFactor: false)
    /// The payload bytes each socket got for the change.
    static let fanOutBytesPerSocket = BenchmarkMetric.custom("Bytes per socket", useScalingFactor: false)
}
