import Foundation
import ServerTestApp
import StateLoopServer
import Synchronization
import TestSupport
import Testing

/// `SyncServer.read`: a read-only view beside writes.
@Suite("Sync server: reads", .timeLimit(.minutes(5)))
struct ReadTests {
    @Test("a read sees what was committed, runs while a write is under way rather than after it, and refuses to write")
    func readBesideWrites() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("stateloop-read-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = SyncServer(store: try SQLiteStore(path: folder.appendingPathComponent("server.sqlite").path), access: Notes.Rules())
        try await server.update { try $0.write("one", to: Notes.pages, "main") }
        // The write holds its transaction open until the read is done (or 120 s passed, a hang
        // guard: 10 s was once too short beside CPU hogs): a read that waited for writes would
        // end after it, and see "two". Met at flags, not pauses, so that a slow start on a loaded
        // machine cannot order them the other way.
        let writing = Mutex(true)
        let wrote = Mutex(false)
        let readDone = DispatchSemaphore(value: 0)
        let slowWrite = Task {
            try await server.update { transaction in
                try transaction.write("two", to: Notes.pages, "main")
                wrote.withLock { $0 = true }
                _ = readDone.wait(timeout: .now() + 120)  // on the store's writer queue, not the pool
            }
            writing.withLock { $0 = false }
        }
        #expect(await eventually(within: .seconds(10)) { wrote.withLock { $0 } }, "the write never started")
        let page = try await server.read { try $0.read(Notes.pages, "main") }
        #expect(page == "one")
        #expect(writing.withLock { $0 }, "the read waited for the write")
        readDone.signal()
        await #expect(throws: ServerTransaction.ReadOnlyTransaction.self) {
            try await server.read { try $0.write("three", to: Notes.pages, "main") }
        }
        try await slowWrite.value
        #expect(try await server.read { try $0.read(Notes.pages, "main") } == "two")
    }
}
