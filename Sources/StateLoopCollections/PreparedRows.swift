import StateLoopWire

/// A page's rows as the local store keeps them, worked out before its write
/// (``LocalCollection/prepare(_:)``): each row's declared fields, and their JSON, in the order of
/// the page's rows.
struct PreparedRows: Sendable {
    var fields: [[String: FieldValue]] = []
    var json: [String] = []
}
