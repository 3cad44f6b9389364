import StateLoopInspector
import StateLoopInspectorWire
import StateLoopJournal

extension Inspector {
    /// Records what `journal` does, under `name`: what opening it found (created, restored from
    /// a saved state and some events, or started fresh beside a file it could not read) and
    /// what it migrated, then its health (events recorded, committed, the last saved state, the
    /// last write error) whenever a write fails and, sampled every `interval` on `clock`,
    /// whenever it changed. Ends when `journal` is released.
    ///
    /// A module of its own, so that an app that inspects systems without a journal does not
    /// link SQLite for it.
    public func watch<State, Event>(
        _ journal: Journal<State, Event>,
        named name: String,
        every interval: Duration = .milliseconds(500),
        clock: any Clock<Duration> = ContinuousClock()
    ) {
        let opened = journal.health
        keepJournal(name, Self.journalStatus(journal, health: opened))
        let errors = journal.errors()
        let failures = Task.detached { [weak self, weak journal] in
            for await error in errors {
                guard let self, let journal else { return }
                self.keepJournal(name, Self.journalStatus(journal, health: journal.health, error: error))
            }
        }
        let sampler = Task.detached { [weak self, weak journal] in
            // Compared with what the first record showed, not with what the task finds when it
            // starts: commits made in between are a change.
            var shown = opened
            while !Task.isCancelled {
                do { try await clock.sleep(for: interval) } catch { return }
                guard let self, let journal else { return }
                let health = journal.health
                if health != shown {
                    shown = health
                    self.keepJournal(name, Self.journalStatus(journal, health: health))
                }
            }
        }
        keepWatches([failures, sampler])
    }

    private func keepJournal(_ name: String, _ status: JSONValue) {
        var record = InspectorRecord(sequence: 0, time: 0, system: name, kind: .journal)
        record.status = redaction.apply(to: status)
        keep(record)
    }

    /// A journal's status as the page shows it (see StateLoopInspector's article “The inspector”).
    static func journalStatus<State, Event>(_ journal: Journal<State, Event>, health: JournalHealth, error: JournalError? = nil) -> JSONValue {
        let recovery: String =
            switch journal.recovery {
            case .created: "created"
            case .restored(let snapshot, let replayed):
                "restored: the state saved after event \(snapshot.map(String.init) ?? "none"), then \(replayed) events"
            case .startedFresh(let error, let setAside): "started fresh: \(error); the unreadable file is at \(setAside)"
            }
        var fields: [String: JSONValue] = [
            "recovery": .string(recovery),
            "lastSequence": .number(Double(health.lastSequence)),
            "durableSequence": .number(Double(health.durableSequence)),
            "snapshotSequence": health.snapshotSequence.map { .number(Double($0)) } ?? .null,
            "unwritten": .number(Double(health.unwrittenEvents)),
            "lastError": (error ?? health.lastError).map { .string("\($0)") } ?? .null,
        ]
        if let migration = journal.migration {
            fields["migrated"] = .array(migration.migrated.map { .string("\($0.kind) \($0.from) → \($0.to)") })
            fields["droppedEvents"] = .number(Double(migration.droppedEvents))
        }
        return .object(fields)
    }
}
