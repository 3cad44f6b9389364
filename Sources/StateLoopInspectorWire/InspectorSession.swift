/// A recorded session: what one app's inspected systems did, in order. The file a user exports
/// and attaches to a bug report, and that a test replays (`SessionReplay` in StateLoopTesting).
public struct InspectorSession: Codable, Sendable, Hashable {
    /// The version of this format.
    public var format = 1
    /// The app's name, as it introduced itself.
    public var app: String
    /// The fields redacted in every event and state.
    public var redaction: Redaction
    /// The records, oldest first.
    public var records: [InspectorRecord]
    /// When the session started (its records' time 0), in seconds since 1970: by the app's
    /// clock in a session the app took, by the inspector's in one its page exported. Places the
    /// session beside others on one timeline.
    public var started: Double?

    /// A session of `app`.
    public init(app: String, redaction: Redaction, records: [InspectorRecord] = [], started: Double? = nil) {
        self.app = app
        self.redaction = redaction
        self.records = records
        self.started = started
    }

    /// The names of the systems that appear in the session, in order of appearance.
    public var systems: [String] {
        var seen: Set<String> = []
        return records.compactMap { seen.insert($0.system).inserted ? $0.system : nil }
    }
}
