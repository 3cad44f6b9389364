import StateLoopJournal

extension ClientState {
    /// What a client's journal stores, version by version, and how a journal written by an
    /// older client is brought up to date when it opens:
    ///
    /// - State and events 2: a resource's value and health travel as one event. A journal of
    ///   version 1 has no migration and is set aside (the client starts fresh; its pending
    ///   mutations were kept by version 1 in the same file, and go with it).
    /// - State 3: the last refused action is kept as `refusal` (it was `lastError`, a name that
    ///   said less: it never held a network error). Migrated by renaming the field, so that a
    ///   relaunched client still shows why its last action was refused.
    ///
    /// - Events 3, state 4: a resource's event carries one `ResourceSnapshot` (value,
    ///   confirmed version, pending count), and neither events nor state keep the resource's
    ///   health, which describes one launch's connection. Migrated by moving the event's fields
    ///   into the snapshot and dropping every stored health.
    ///
    /// The mutation stores (`driver-mode`, `ride`) are at version 1.
    public static var journalSchema: JournalSchema {
        var schema = JournalSchema()
        schema.setVersion(2, of: .events)
        schema.setVersion(2, of: .state)
        schema.migrateState(from: 2) { state in
            state.renameField("lastError", to: "refusal")
        }
        schema.migrateState(from: 3) { state in
            state["driverMode"]?["health"] = nil
            state["ride"]?["health"] = nil
        }
        schema.migrateEvents(from: 2) { event in
            guard let (name, values) = event.enumCase, name == "driverMode" || name == "ride" else { return event }
            var snapshot: JournalValue = ["pendingMutations": values["pending"] ?? 0]
            snapshot["value"] = values["_0"]
            snapshot["confirmedVersion"] = values["version"]
            return JournalValue(case: name, ["_0": snapshot])
        }
        return schema
    }
}
