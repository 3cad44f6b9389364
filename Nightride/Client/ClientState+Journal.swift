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
    /// The mutation stores (`driver-mode`, `ride`) are at version 1.
    public static var journalSchema: JournalSchema {
        var schema = JournalSchema()
        schema.setVersion(2, of: .events)
        schema.setVersion(2, of: .state)
        schema.migrateState(from: 2) { state in
            state.renameField("lastError", to: "refusal")
        }
        return schema
    }
}
