/// Where in the app's code an event was sent: the file and line of the call to
/// ``System/send(_:fileID:line:)``, as a monitor is told it (an inspector shows it beside the
/// event). Captured as the compiler's literals, so sending costs nothing more than passing two
/// words on.
public struct SentFrom: Sendable, CustomStringConvertible {
    /// The file, as `#fileID` writes it: `Module/File.swift`.
    public let fileID: StaticString
    /// The line of the call.
    public let line: UInt

    @inlinable
    public init(fileID: StaticString, line: UInt) {
        self.fileID = fileID
        self.line = line
    }

    /// `Module/File.swift:42`.
    public var description: String {
        "\(fileID):\(line)"
    }
}
