import Foundation
import ServerTestApp
import StateLoopServer
import Synchronization
import Testing

/// `SyncServer.read`: a read-only view beside writes.
@Suite("Sync server: reads", .timeLimit(.minutes(2)))
struct ReadTests {
    @Test("a read sees what was committed, runs while a write is under way rather than after it, and refuses to write")
    func readBesideWrites() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("stateloop-read-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = SyncServer(store: try SQLiteStore(path: folder.appendingPathComponent("server.sqlite").path), access: Notes.Rules())
        try await server.update { try $0.write("one", to: Notes.pages, "main") }
        let writing = Mutex(true)
        let slowWrite = Task {
            try await server.update { transaction in
                try transaction.write("two", to: Notes.pages, "main")
                Thread.sleep(forTimeInterval: 0.5)  // on the store's writer queue, not the pool
            }
            writing.withLock { $0 = false }
        }
        try await Task.sleep(for: .milliseconds(100))
        let page = try await server.read { try $0.read(Notes.pages, "main") }
        #expect(page == "one")
        #expect(writing.withLock { $0 }, "the read waited for the write")
        await #expect(throws: ServerTransaction.ReadOnlyTransaction.self) {
            try await server.read { try $0.write("three", to: Notes.pages, "main") }
        }
        try await slowWrite.value
        #expect(try await server.read { try $0.read(Notes.pages, "main") } == "two")
    }
}
