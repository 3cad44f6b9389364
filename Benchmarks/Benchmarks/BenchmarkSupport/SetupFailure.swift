/// A benchmark's setup could not build what it measures.
public struct SetupFailure: Error, CustomStringConvertible {
    /// What went wrong.
    public let message: String

    /// A failure saying `message`.
    public init(message: String) {
        self.message = message
    }

    public var description: String { message }
}
