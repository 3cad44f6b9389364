/// A push message that is neither a versioned value nor a change hint: reported to the resource
/// as `PushMessage.failed(_:)` (it shows in `ResourceStatus.pushFailure` and the resource
/// pulls what the message could not say), rather than dropped without a trace.
public struct PushDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// How much of a message is kept, in characters: enough to recognise it in a log, not so
    /// much that a huge message fills the log or the screen.
    public static let excerptLength = 100

    /// What is wrong with the message: "The given data was not valid JSON.", `no "version" at
    /// value`, and so on.
    public var problem: String
    /// The start of the message: its first ``excerptLength`` characters.
    public var excerpt: String
    /// Whether the message went on past ``excerpt``.
    public var isTruncated: Bool

    /// An error for `message`, of which only the start is kept.
    public init(problem: String, message: String) {
        self.problem = problem
        self.excerpt = String(message.prefix(Self.excerptLength))
        self.isTruncated = message.count > Self.excerptLength
    }

    /// An error for `message`, which `error` (thrown by a `Decoder`) explains.
    init(_ error: any Error, message: String) {
        self.init(problem: Self.summary(of: error), message: message)
    }

    /// The problem, then the start of the message quoted with Swift escapes, so that a control
    /// character in it cannot act on the terminal showing a log.
    public var description: String {
        "undecodable push message (\(problem)): \(String(reflecting: excerpt))" + (isTruncated ? "…" : "")
    }

    /// One line for a decoding error, without the nested contexts of `DecodingError`'s own
    /// description.
    private static func summary(of error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        switch error {
        case .dataCorrupted(let context):
            return context.debugDescription + place(context)
        case .keyNotFound(let key, let context):
            return "no \"\(key.stringValue)\"" + place(context)
        case .typeMismatch(let type, let context):
            return "not a \(type)" + place(context)
        case .valueNotFound(let type, let context):
            return "no \(type)" + place(context)
        @unknown default:
            return "\(error)"
        }
    }

    /// " at value.name": where in the message the problem is, if not at the top.
    private static func place(_ context: DecodingError.Context) -> String {
        context.codingPath.isEmpty ? "" : " at " + context.codingPath.map(\.stringValue).joined(separator: ".")
    }
}
