import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Real processes killed with SIGKILL: the journal's promise is about what survives a crash,
/// and only a crash shows it.
@Suite("Journal: crashes of a real process", .serialized, .timeLimit(.minutes(5)))
struct CrashTests {
    @Test("100 kills at seeded random points: each restart restores every event whose send returned, none twice")
    func killedAtRandomPoints() async throws {
        let folder = TemporaryFolder()
        var random = SplitMix64(seed: 20_261_122)
        // What the previous runs established: every value up to `returned` had its send return;
        // values up to `attempted` had a send started.
        var returned = 0
        var attempted = 0
        var restoredCounts: [Int] = []
        for run in 0..<100 {
            let child = try ChildProcess("journal-crash-child", ["tally", folder.journal, "\(random.next())"])
            guard let first = child.readLine(), first.hasPrefix("restored ") else {
                Issue.record("run \(run): no restore line; stderr: \(child.kill().stderr)")
                return
            }
            let restored = first.split(separator: " ").dropFirst().map(String.init)
            let count = Int(restored[0]) ?? -1
            // A send in progress at the kill is committed entirely or not at all.
            #expect(
                count == returned || (count > returned && count <= attempted),
                "run \(run): restored \(count), returned \(returned), attempted \(attempted)")
            let expected = count > 0 ? Tally.folding(1...count) : Tally()
            #expect(restored == ["\(expected.count)", "\(expected.sum)", "\(expected.checksum)"], "run \(run)")
            restoredCounts.append(count)
            returned = count
            attempted = count

            // Kill after a random number of reported lines: the child runs on meanwhile, so the
            // kill lands anywhere in a send, a commit or a snapshot.
            /// Follows the child's progress lines; false for any other line.
            func track(_ line: Substring) -> Bool {
                let parts = line.split(separator: " ")
                switch parts.first {
                case "sending": attempted = Int(parts[2]) ?? attempted
                case "sent": returned = Int(parts[1]) ?? returned
                default: return false
                }
                return true
            }
            let linesBeforeKill = Int(random.next() % 400)
            for _ in 0..<linesBeforeKill {
                guard let line = child.readLine() else { break }
                if !track(line[...]) {
                    Issue.record("run \(run): unexpected line \(line)")
                }
            }
            // Lines already in the pipe were written after their sends returned.
            let rest = child.kill()
            for line in rest.stdout.split(separator: "\n") {
                _ = track(line)
            }
            #expect(rest.signal == SIGKILL, "run \(run): \(rest.stderr)")
        }
        #expect(restoredCounts.count == 100)
        #expect(returned > 100)
    }

    @Test("a multi-step job killed halfway is finished by the next launch, without being told")
    func jobResumesAfterKill() async throws {
        let folder = TemporaryFolder()
        let first = try ChildProcess("journal-crash-child", ["job", folder.journal, "start"])
        #expect(first.readLine() == "restored 0")
        var line = first.readLine()
        while let current = line, current != "done 2" {
            line = first.readLine()
        }
        #expect(line == "done 2")
        _ = first.kill()

        // Started again with no command: the restored state calls for the next step.
        let second = try ChildProcess("journal-crash-child", ["job", folder.journal])
        var lines: [String] = []
        while let line = second.readLine() {
            lines.append(line)
        }
        // The restored effect may report "working 3" before the child prints what it restored.
        #expect(lines.filter { $0.hasPrefix("restored") } == ["restored 2"])
        let ended = await second.ended()
        #expect(ended.status == 0, "\(ended.stderr)")
        #expect(lines.last == "finished")
        #expect(lines.contains("done 5"))
        #expect(lines.contains("working 5"))
        #expect(lines.contains("working 3"))
        #expect(!lines.contains("working 1") && !lines.contains("working 2"))
    }
}
