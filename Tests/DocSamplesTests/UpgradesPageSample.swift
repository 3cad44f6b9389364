import StateLoopJournal

/// `Sources/StateLoopJournal/StateLoopJournal.docc/Migrations.md`'s schema, compiled.
struct Trip: Codable, Sendable {
    var origin = ""
}

enum TripEvent: Codable, Sendable {
    case setOrigin(String)
}

// Sources/StateLoopJournal/StateLoopJournal.docc/Migrations.md:
extension Trip {
    static var journalSchema: JournalSchema {
        var schema = JournalSchema()
        // State 1 → 2: `pickup` is now `origin`.
        schema.migrateState(from: 1) { state in
            state.renameField("pickup", to: "origin")
        }
        // Events 1 → 2: `setPickup` became `setOrigin`; `clearStops` is gone.
        schema.migrateEvents(from: 1) { event in
            switch event.enumCase?.name {
            case "setPickup": JournalValue(case: "setOrigin", ["_0": event["setPickup"]?["_0"] ?? ""])
            case "clearStops": nil  // dropped: the restore replays the others
            default: event
            }
        }
        // Mutations of store "bookings" 1 → 2: a destination string became a place.
        schema.migrateMutations(of: "bookings", from: 1) { booking in
            ["place": ["name": booking["destination"] ?? ""]]
        }
        return schema
    }

    /// The journal, migrated as it opens.
    static func journal(at path: String) throws -> Journal<Trip, TripEvent> {
        try Journal(at: path, configuration: JournalConfiguration(schema: journalSchema))
    }
}
// End of the example.
