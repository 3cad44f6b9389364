import StateLoop
import StateLoopJournal
import TestSupport

// The process that the journal's crash tests kill. It reports on stdout, one line per fact,
// written straight to the file descriptor so that a line is out before the next step runs:
//
//   journal-crash-child tally <path> <seed>
//     restored <count> <sum> <checksum>   then, forever:
//     sending <first> <last>              before a send of the values first...last
//     sent <last>                         once that send has returned
//
//   journal-crash-child fill <path> <count>
//     writes the values 1...count as version 1 events (plain integers), then: filled <count>
//
//   journal-crash-child migrate <path>
//     started, then opens the journal with version 2 of the events (`{"value": n}`), which
//     migrates a version 1 journal, then: restored <count> <sum> <checksum>
//
//   journal-crash-child job <path> [start]
//     restored <done>, then done <n> after each committed step, then finished. With `start`,
//     step 3 never ends, so a kill after "done 2" always lands in the middle of the job.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

func fail(_ message: String) -> Never {
    report("error \(message)")
    exit(2)
}

// MARK: Tally: events fed as fast as possible

struct Tally: Codable, Sendable {
    var count = 0
    var sum = 0
    var checksum: UInt64 = 14_695_981_039_346_656_037

    static func reduce(_ state: inout Tally, _ value: Int) {
        state.count += 1
        state.sum += value
        state.checksum = (state.checksum ^ UInt64(truncatingIfNeeded: value)) &* 1_099_511_628_211
    }
}

@MainActor
func runTally(path: String, seed: UInt64) -> Never {
    let journal: Journal<Tally, Int>
    do {
        journal = try Journal(at: path, configuration: JournalConfiguration(snapshotInterval: 25, unreadable: .fail))
    } catch {
        fail("\(error)")
    }
    let system = System(journal: journal, initialState: Tally(), reduce: Tally.reduce)
    let restored = system.state
    report("restored \(restored.count) \(restored.sum) \(restored.checksum)")
    var random = SplitMix64(seed: seed)
    var next = restored.count + 1
    while true {
        // Mostly single sends, sometimes a burst committed as one transaction.
        let size = Int.random(in: 0..<4, using: &random) == 0 ? Int.random(in: 2...40, using: &random) : 1
        let values = next..<(next + size)
        report("sending \(values.lowerBound) \(values.upperBound - 1)")
        if size == 1 {
            system.send(next)
        } else {
            system.send(contentsOf: values)
        }
        report("sent \(values.upperBound - 1)")
        if let error = journal.health.lastError {
            fail("\(error)")
        }
        next = values.upperBound
    }
}

// MARK: Job: a multi-step effect

struct Job: Codable, Sendable {
    var steps = 0
    var done = 0

    var nextStep: Int? { done < steps ? done + 1 : nil }

    static func reduce(_ state: inout Job, _ event: JobEvent) {
        switch event {
        case .start(let steps): state.steps = steps
        case .finished(let step): state.done = max(state.done, step)
        }
    }
}

enum JobEvent: Codable, Sendable {
    case start(steps: Int)
    case finished(step: Int)
}

@MainActor
func runJob(path: String, start: Bool) async -> Never {
    let journal: Journal<Job, JobEvent>
    do {
        journal = try Journal(at: path, configuration: JournalConfiguration(unreadable: .fail))
    } catch {
        fail("\(error)")
    }
    let system = System(
        journal: journal,
        initialState: Job(),
        reduce: Job.reduce,
        feedbacks: [
            // The job's work: each step takes a while, and the next starts from the state.
            .react(query: \.nextStep) { step in
                report("working \(step)")
                try? await Task.sleep(for: .milliseconds(50))
                if start && step == 3 {
                    // The first launch stalls here until it is killed.
                    try? await Task.sleep(for: .seconds(3_600))
                }
                return .finished(step: step)
            }
        ]
    )
    report("restored \(system.state.done)")
    var lastDone = system.state.done
    // Observers run after the commit: a "done" line is a step the journal already holds.
    let subscription = system.observe { state in
        if state.done != lastDone {
            lastDone = state.done
            report("done \(state.done)")
        }
    }
    if start && system.state.steps == 0 {
        system.send(.start(steps: 5))
    }
    for await state in system.states where state.steps > 0 && state.done == state.steps {
        break
    }
    subscription.cancel()
    report("finished")
    exit(0)
}

// MARK: Migration: version 1 events are integers, version 2 wraps them

/// Version 2 of the tally's event.
struct Entry: Codable, Sendable {
    let value: Int
}

/// The events at version 2, with the migration from version 1.
let entrySchema: JournalSchema = {
    var schema = JournalSchema()
    schema.migrateEvents(from: 1) { value in ["value": value] }
    return schema
}()

@MainActor
func runFill(path: String, count: Int) -> Never {
    do {
        let journal = try Journal<Tally, Int>(at: path, configuration: JournalConfiguration(snapshotInterval: nil, unreadable: .fail))
        let system = System(journal: journal, initialState: Tally(), reduce: Tally.reduce)
        for start in stride(from: 1, through: count, by: 1_000) {
            system.send(contentsOf: start...min(start + 999, count))
        }
        system.stop()
        journal.close()
    } catch {
        fail("\(error)")
    }
    report("filled \(count)")
    exit(0)
}

@MainActor
func runMigrate(path: String) -> Never {
    report("started")
    let journal: Journal<Tally, Entry>
    do {
        journal = try Journal(
            at: path,
            configuration: JournalConfiguration(schema: entrySchema, snapshotInterval: nil, unreadable: .fail)
        )
    } catch {
        fail("\(error)")
    }
    let system = System(journal: journal, initialState: Tally()) { state, entry in Tally.reduce(&state, entry.value) }
    let state = system.state
    system.stop()
    journal.close()
    report("restored \(state.count) \(state.sum) \(state.checksum)")
    exit(0)
}

/// Runs this process at the lowest priority: a migration of 100,000 events keeps both cores
/// busy (its rows are migrated in parallel), and the suite's tests with real-time bounds (the
/// Nightride demo's convergence within 2 s) run beside it.
func yieldTheProcessor() {
    #if canImport(Glibc)
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)
    #else
        _ = setpriority(PRIO_PROCESS, 0, 19)
    #endif
}

let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
    fail("usage: journal-crash-child tally <path> <seed> | fill <path> <count> | migrate <path> | job <path> [start]")
}
switch arguments[1] {
case "tally":
    runTally(path: arguments[2], seed: UInt64(arguments.count > 3 ? arguments[3] : "0") ?? 0)
case "fill":
    yieldTheProcessor()
    runFill(path: arguments[2], count: Int(arguments.count > 3 ? arguments[3] : "0") ?? 0)
case "migrate":
    yieldTheProcessor()
    runMigrate(path: arguments[2])
case "job":
    await runJob(path: arguments[2], start: arguments.count > 3 && arguments[3] == "start")
default:
    fail("unknown mode \(arguments[1])")
}
