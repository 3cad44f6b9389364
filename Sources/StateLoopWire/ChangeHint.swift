/// The push message that says a value changed without carrying it: `{"changed": true}`. A
/// client that receives it pulls the value. A server sends it when the value is too large to
/// push, when it cannot tell what changed, or to make a client catch up after a gap.
public struct ChangeHint: Codable, Sendable, Hashable {
    /// Always `true` in a hint; a message with `false` says nothing.
    public var changed: Bool

    /// A hint.
    public init(changed: Bool = true) {
        self.changed = changed
    }
}
