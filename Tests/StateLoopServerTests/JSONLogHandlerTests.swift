import Foundation
import Logging
import ServerTestApp
import StateLoopServer
import Synchronization
import Testing

/// Logs as one JSON object a line, for collectors: every field readable back, the request id on
/// a request's lines.
@Suite("JSON log lines")
struct JSONLogHandlerTests {
    /// Lines written, in order.
    final class Lines: Sendable {
        private let storage = Mutex<[String]>([])
        func append(_ line: String) { storage.withLock { $0.append(line) } }
        var all: [String] { storage.withLock { $0 } }

        /// Each line parsed as a JSON object.
        func objects() throws -> [[String: Any]] {
            try all.map { line in
                try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
            }
        }
    }

    @Test("one object a line: time, level, label, message, source, then the metadata, escaped so that any text reads back")
    func fields() throws {
        let lines = Lines()
        var logger = Logger(label: "app") { label in JSONLogHandler(label: label, write: lines.append) }
        logger[metadataKey: "instance"] = "a"
        let tricky = "quote \" backslash \\ newline \n tab \t bell \u{7} line separator \u{2028} é 漢"
        logger.notice("hello \(tricky)", metadata: ["list": ["1", "2"], "map": ["k": "v"], "n": "\(42)", "level": "mine"])
        logger.debug("not written: below the level")
        #expect(lines.all.count == 1)
        #expect(!lines.all[0].contains("\n"), "one line")
        let object = try #require(try lines.objects().first)
        #expect(object["level"] as? String == "notice")
        #expect(object["label"] as? String == "app")
        #expect(object["message"] as? String == "hello \(tricky)")
        #expect(object["instance"] as? String == "a")
        #expect(object["list"] as? [String] == ["1", "2"])
        #expect((object["map"] as? [String: String]) == ["k": "v"])
        #expect(object["n"] as? String == "42")
        #expect(object["metadata.level"] as? String == "mine", "a field named as the line's own is kept apart")
        #expect(lines.all[0].components(separatedBy: "\"level\":").count == 2, "one level key: \(lines.all[0])")
        let time = try #require(object["time"] as? String)
        #expect(time.hasSuffix("Z") && time.contains("T") && time.count == 24, "\(time)")
    }

    @Test("every answer is logged at info through its request's logger: its request id, route, status and duration")
    func requestLines() async throws {
        let lines = Lines()
        let logger = Logger(label: "server") { label in
            var handler = JSONLogHandler(label: label, write: lines.append)
            handler.logLevel = .info
            return handler
        }
        let server = SyncServer(store: try SQLiteStore(), access: Notes.Rules(), logger: logger)
        Notes.declare(on: server)
        try await withRunning(server) { port in
            _ = try await TestClient(port: port).send("GET", "me/notes", as: nil)
            _ = try await TestClient(port: port).send("GET", "health/live", as: nil)
        }
        let answered = try lines.objects().filter { $0["message"] as? String == "answered" }
        #expect(answered.map { $0["route"] as? String } == ["GET /me/notes", "GET /health/live"], "\(lines.all)")
        #expect(answered.map { $0["status"] as? String } == ["401", "200"])
        let ids = answered.compactMap { $0["hb.request.id"] as? String }
        #expect(ids.count == 2 && Set(ids).count == 2, "a request id each: \(ids)")
        #expect(answered.allSatisfy { Double($0["duration_ms"] as? String ?? "") != nil })
    }
}
