import Foundation
import StateLoop
import Testing

@testable import StateLoopJournal

@MainActor
@Suite("Journal: unreadable files, upgrades, full disk", .timeLimit(.minutes(4)))
struct JournalFailureTests {
    @Test("an event that no longer decodes: the file is set aside, a new journal starts, the error says why")
    func undecodableEventSetAside() throws {
        let folder = TemporaryFolder()
        try write([.add(1), .add(2)], to: folder.journal)
        let original = try Data(contentsOf: URL(fileURLWithPath: folder.journal))

        let journal = try Journal<Tally, RenamedTallyEvent>(at: folder.journal)
        guard case .startedFresh(let error, let setAside) = journal.recovery,
            case .undecodableEvent(let path, 1, 1, _) = error
        else {
            Issue.record("expected a fresh start after an undecodable event, got \(journal.recovery)")
            return
        }
        #expect(path == folder.journal)
        #expect(setAside.hasPrefix(folder.journal + ".unreadable-"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: setAside)) == original)
        #expect(journal.health.lastSequence == 0)
        #expect(error.description.contains("Event 1"))
    }

    @Test("with the fail policy the error is thrown and the file is left as it was")
    func undecodableEventFailPolicy() throws {
        let folder = TemporaryFolder()
        try write([.add(1)], to: folder.journal)
        let before = folder.files()
        let original = try Data(contentsOf: URL(fileURLWithPath: folder.journal))
        #expect(throws: JournalError.self) {
            _ = try Journal<Tally, RenamedTallyEvent>(
                at: folder.journal,
                configuration: JournalConfiguration(unreadable: .fail)
            )
        }
        #expect(folder.files() == before)
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder.journal)) == original)
        let (state, _) = try restore(folder.journal)
        #expect(state == Tally.folding([1]))
    }

    @Test("a saved state that no longer decodes names its version and the fix")
    func undecodableSnapshot() throws {
        let folder = TemporaryFolder()
        try write((1...5).map(TallyEvent.add), to: folder.journal, configuration: JournalConfiguration(schema: .versions(3), snapshotInterval: 2))
        let journal = try Journal<GrownTally, TallyEvent>(
            at: folder.journal,
            configuration: JournalConfiguration(schema: .versions(3), unreadable: .setAsideAndStartFresh)
        )
        guard case .startedFresh(.undecodableSnapshot(_, 4, 3, _), _) = journal.recovery else {
            Issue.record("expected an undecodable snapshot, got \(journal.recovery)")
            return
        }
        guard case .startedFresh(let error, _) = journal.recovery else { return }
        #expect(error.description.contains("migrateState(from:)"))
    }

    @Test("a journal written by a newer app version is not misread by an older one")
    func newerVersion() throws {
        let folder = TemporaryFolder()
        try write([.add(1)], to: folder.journal, configuration: JournalConfiguration(schema: .versions(5)))
        #expect(throws: JournalError.newerSchema(path: folder.journal, kind: .events, stored: 5, expected: 4)) {
            _ = try Journal<Tally, TallyEvent>(at: folder.journal, configuration: JournalConfiguration(schema: .versions(4), unreadable: .fail))
        }
        // The same app version still reads it.
        let (state, _) = try restore(folder.journal, configuration: JournalConfiguration(schema: .versions(5)))
        #expect(state == Tally.folding([1]))
    }

    /// A crash image: the main file after a clean close, and a WAL with later events, copied
    /// while the journal was still open (as a killed process leaves them).
    @MainActor
    func crashImage(in folder: TemporaryFolder) throws -> (main: Data, wal: Data) {
        try write((1...500).map { TallyEvent.note(String(repeating: "a", count: 100 + $0 % 50)) }, to: folder.journal)
        let journal = try Journal<Tally, TallyEvent>(at: folder.journal, configuration: JournalConfiguration(snapshotInterval: nil))
        let system = System(journal: journal, initialState: Tally(), reduce: Tally.reduce)
        for value in 1...2_000 {
            system.send(.add(value))
        }
        let main = try Data(contentsOf: URL(fileURLWithPath: folder.journal))
        let wal = try Data(contentsOf: URL(fileURLWithPath: folder.journal + "-wal"))
        system.stop()
        journal.close()
        return (main, wal)
    }

    /// The pages a WAL holds a copy of: SQLite reads those from the WAL, so damage to them in
    /// the main file is no damage at all. (A frame is a 24-byte header, whose first 4 bytes are
    /// the page number, and a page; the WAL starts with a 32-byte header.)
    func pagesInWAL(_ wal: Data, pageSize: Int = 4_096) -> Set<Int> {
        var pages = Set<Int>()
        var frame = wal.startIndex + 32
        while frame + 24 + pageSize <= wal.endIndex {
            pages.insert(Int(wal[frame..<frame + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }))
            frame += 24 + pageSize
        }
        return pages
    }

    @Test(
        "a damaged main file beside its WAL: set aside byte for byte, or with .fail left byte for byte",
        arguments: [0, 1, 2]
    )
    @MainActor
    func crashImageKept(damagedPage: Int) throws {
        let source = TemporaryFolder()
        var (main, wal) = try crashImage(in: source)
        #expect(wal.count > 100_000, "the WAL holds the later events")
        // The first, a middle and the last page of the main file that the WAL does not hold
        // (page 1, the header, is usually in the WAL: the file's size is written in it).
        let inWAL = pagesInWAL(wal)
        let candidates = (1...(main.count / 4_096)).filter { !inWAL.contains($0) }
        let page = [candidates.first, candidates[candidates.count / 2], candidates.last][damagedPage] ?? 1
        // The page's b-tree header: at its start, or after the file header on page 1.
        let offset = (page - 1) * 4_096 + (page == 1 ? 100 : 0)
        main.replaceSubrange(offset..<(offset + 16), with: Data(repeating: 0xA5, count: 16))
        let folder = TemporaryFolder()
        func placeImage() throws {
            for file in folder.files() {
                try FileManager.default.removeItem(atPath: folder.path + "/" + file)
            }
            try main.write(to: URL(fileURLWithPath: folder.journal))
            try wal.write(to: URL(fileURLWithPath: folder.journal + "-wal"))
        }

        try placeImage()
        #expect(throws: JournalError.self, "damage at \(offset) is found") {
            _ = try Journal<Tally, TallyEvent>(at: folder.journal, configuration: JournalConfiguration(unreadable: .fail))
        }
        #expect(folder.files() == ["tally.journal", "tally.journal-wal"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder.journal)) == main, "the main file is untouched")
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder.journal + "-wal")) == wal, "the WAL is untouched")

        try placeImage()
        let (state, recovery) = try restore(folder.journal)
        #expect(state == Tally())
        guard case .startedFresh(_, let setAside) = recovery else {
            Issue.record("expected the image to be set aside, got \(recovery)")
            return
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: setAside)) == main, "the set-aside main file is the image's")
        #expect(try Data(contentsOf: URL(fileURLWithPath: setAside + "-wal")) == wal, "the set-aside WAL is the image's")
        #expect(!FileManager.default.fileExists(atPath: setAside + "-shm"), "nothing was added beside it")
    }

    @Test("a clean close is recorded, so the next open skips the full check; a crash image is checked page by page")
    func cleanCloseMarker() throws {
        let folder = TemporaryFolder()
        try write([.add(1), .add(2)], to: folder.journal)
        let reader = try JournalDatabase(path: folder.journal, durability: .processCrash, readOnly: true)
        #expect(try reader.closedCleanly(), "a closed journal is marked clean")
        reader.close()

        let image = TemporaryFolder()
        let (main, wal) = try crashImage(in: folder)
        try main.write(to: URL(fileURLWithPath: image.journal))
        try wal.write(to: URL(fileURLWithPath: image.journal + "-wal"))
        let crashed = try JournalDatabase(path: image.journal, durability: .processCrash, readOnly: true)
        #expect(try !crashed.closedCleanly(), "a session that never closed leaves the marker cleared")
        crashed.close()
        try? FileManager.default.removeItem(atPath: image.journal + "-shm")
        let (state, recovery) = try restore(image.journal)
        #expect(state.count == 2 + 2_000)
        guard case .restored = recovery else {
            Issue.record("expected the crash image to be restored, got \(recovery)")
            return
        }
    }

    @Test("a file that is not a database is set aside; the app starts")
    func notADatabase() throws {
        let folder = TemporaryFolder()
        let garbage = Data("this is not a journal, just some bytes".utf8) + Data(repeating: 7, count: 5_000)
        try garbage.write(to: URL(fileURLWithPath: folder.journal))
        let (state, recovery) = try restore(folder.journal)
        #expect(state == Tally())
        guard case .startedFresh(.corrupt, let setAside) = recovery else {
            Issue.record("expected a corrupt file, got \(recovery)")
            return
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: setAside)) == garbage)
    }

    @Test("a truncated file is reported as damaged and kept for inspection")
    func truncatedFile() throws {
        let folder = TemporaryFolder()
        try write((1...3_000).map { TallyEvent.note(String(repeating: "x", count: 100 + $0 % 50)) }, to: folder.journal)
        let url = URL(fileURLWithPath: folder.journal)
        let full = try Data(contentsOf: url)
        #expect(full.count > 100_000)
        let truncated = full.prefix(full.count / 2)
        try truncated.write(to: url)

        #expect {
            _ = try Journal<Tally, TallyEvent>(at: folder.journal, configuration: JournalConfiguration(unreadable: .fail))
        } throws: { error in
            guard case .corrupt = error as? JournalError else { return false }
            return true
        }
        #expect(try Data(contentsOf: url) == truncated)
        let (state, recovery) = try restore(folder.journal)
        #expect(state == Tally())
        guard case .startedFresh(.corrupt, _) = recovery else {
            Issue.record("expected a corrupt file, got \(recovery)")
            return
        }
    }

    @Test(
        "a file cut short by one byte after a clean close is reported as damaged, not as an event that needs a migration", arguments: [1, 7, 4_095])
    func cutShortAfterCleanClose(bytes: Int) throws {
        let folder = TemporaryFolder()
        try write((1...300).map { TallyEvent.note(String(repeating: "x", count: 100 + $0 % 50)) }, to: folder.journal)
        let url = URL(fileURLWithPath: folder.journal)
        let full = try Data(contentsOf: url)
        let cut = full.prefix(full.count - bytes)
        try cut.write(to: url)

        #expect {
            _ = try Journal<Tally, TallyEvent>(at: folder.journal, configuration: JournalConfiguration(unreadable: .fail))
        } throws: { error in
            guard case .corrupt(_, let detail) = error as? JournalError else { return false }
            return detail.contains("cut short")
        }
        #expect(try Data(contentsOf: url) == cut, "left as found")
    }

    @Test("a second journal on a file in use is refused, and nothing is set aside")
    func inUse() throws {
        let folder = TemporaryFolder()
        let first = try Journal<Tally, TallyEvent>(at: folder.journal)
        #expect(throws: JournalError.inUse(path: folder.journal)) {
            _ = try Journal<Tally, TallyEvent>(at: folder.journal)
        }
        #expect(folder.files().allSatisfy { !$0.contains("unreadable") })
        first.close()
        #expect(throws: Never.self) { _ = try Journal<Tally, TallyEvent>(at: folder.journal) }
    }

    @Test("a folder that cannot hold the file is a clear error")
    func missingFolder() {
        let path = "/nonexistent-\(UUID().uuidString)/tally.journal"
        #expect {
            _ = try Journal<Tally, TallyEvent>(at: path)
        } throws: { error in
            guard case .cannotOpen(path, _) = error as? JournalError else { return false }
            return (error as? JournalError)?.description.contains("writable") == true
        }
    }

    @Test("a full disk: the app goes on, the error is reported, nothing is lost once there is room")
    func diskFull() async throws {
        let folder = TemporaryFolder()
        let journal = try Journal<Tally, TallyEvent>(at: folder.journal, configuration: JournalConfiguration(snapshotInterval: nil))
        var errors = journal.errors().makeAsyncIterator()
        let system = System(journal: journal, initialState: Tally(), reduce: Tally.reduce)
        try journal.database.limitSize(toPages: journal.database.pageCount() + 2)
        let note = String(repeating: "n", count: 2_000)
        var sent = 0
        while journal.health.lastError == nil, sent < 1_000 {
            sent += 1
            system.send(.note(note + "\(sent)"))
            system.send(.add(sent))
        }
        #expect(journal.health.lastError == .diskFull(path: folder.journal))
        #expect(await errors.next() == .diskFull(path: folder.journal))
        #expect(journal.health.unwrittenEvents > 0)
        #expect(system.state.count == sent)

        try journal.database.limitSize(toPages: 1_000_000)
        system.send(.add(sent + 1))
        #expect(journal.health.lastError == nil)
        #expect(journal.health.unwrittenEvents == 0)
        system.stop()
        journal.close()

        let (state, _) = try restore(folder.journal)
        #expect(state.count == sent + 1)
        #expect(state.sum == (1...(sent + 1)).reduce(0, +))
    }
}
