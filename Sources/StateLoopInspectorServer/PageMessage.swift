import StateLoopInspectorWire

/// What the inspector sends to a page (see StateLoopInspector's article “The inspector”): exactly one member set.
struct PageMessage: Encodable, Sendable {
    var apps: [AppSummary]?
    var records: AppRecords?
    var previewStatus: AppPreviewStatus?
    var dispatched: AppDispatchStatus?
    var recomputed: AppRecomputed?

    /// One app as the page lists it.
    struct AppSummary: Encodable, Sendable {
        var id: Int
        var app: String
        var session: String
        var connected: Bool
        var records: Int
        /// Records the inspector itself let go (it keeps at most its cap per app).
        var dropped: Int
        /// Records the app's own buffer lost before sending them (the sum of its `dropped` records).
        var droppedByApp: Int
        /// The number of the last record received.
        var lastSequence: UInt64
        var redaction: Redaction
        /// When the app's session started, in seconds since 1970 on the inspector's clock: a
        /// record's ``InspectorRecord/time`` after it places the record on the page's one
        /// timeline, whatever the app's own clock says.
        var clockBase: Double?
    }

    /// Records of one app, oldest first.
    struct AppRecords: Encodable, Sendable {
        var app: Int
        var records: [InspectorRecord]
    }

    /// An app's answer to a skip: the states without the event skipped.
    struct AppRecomputed: Encodable, Sendable {
        var app: Int
        var recomputed: Recomputed
    }

    /// An app's answer to an event sent to it.
    struct AppDispatchStatus: Encodable, Sendable {
        var app: Int
        var system: String
        var problem: String?
    }

    /// An app's answer to a preview request.
    struct AppPreviewStatus: Encodable, Sendable {
        var app: Int
        var system: String
        var sequence: UInt64?
        var problem: String?
    }
}

/// What a page asks of the inspector: exactly one member set.
struct PageCommand: Decodable, Sendable {
    var preview: Preview?
    var endPreview: EndPreview?
    var dispatch: Dispatch?
    var skip: Skip?

    struct Skip: Decodable, Sendable {
        var app: Int
        var system: String
        var sequence: UInt64
    }

    struct Dispatch: Decodable, Sendable {
        var app: Int
        var system: String
        var event: JSONValue
    }

    struct Preview: Decodable, Sendable {
        var app: Int
        var system: String
        var sequence: UInt64
    }

    struct EndPreview: Decodable, Sendable {
        var app: Int
        var system: String
    }
}
