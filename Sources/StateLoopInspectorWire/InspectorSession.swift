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

    /// A session of `app`.
    public init(app: String, redaction: Redaction, records: [InspectorRecord] = []) {
        self.app = app
        self.redaction = redaction
        self.records = records
    }

    /// The names of the systems that appear in the session, in order of appearance.
    public var systems: [String] {
        var seen: Set<String> = []
        return records.compactMap { seen.insert($0.system).inserted ? $0.system : nil }
    }
}
