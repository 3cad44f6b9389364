/// The answer to a mutation that was applied:
/// `{"version": {"epoch": 1, "counter": 7}}`, the version of the resource once the mutation was
/// applied. A repeated `Mutation-ID` gets the receipt of the first time.
public struct MutationReceipt: Codable, Sendable, Hashable {
    /// The version of the changed resource after the mutation.
    public var version: Version

    /// A receipt for `version`.
    public init(version: Version) {
        self.version = version
    }
}
