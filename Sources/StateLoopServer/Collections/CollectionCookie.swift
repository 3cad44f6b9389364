/// Where a collection's subscriber stands in the server's history: the store's epoch and a
/// position in its change feed, written `<epoch>.<position>`. Clients hold it as opaque text.
struct CollectionCookie: Sendable, Hashable, CustomStringConvertible {
    var epoch: UInt64
    var position: UInt64

    init(epoch: UInt64, position: UInt64) {
        self.epoch = epoch
        self.position = position
    }

    /// A cookie read back; `nil` for text that is not one.
    init?(_ text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ $0.utf8.allSatisfy { (48...57).contains($0) } }), let epoch = UInt64(parts[0]),
            let position = UInt64(parts[1])
        else { return nil }
        self.init(epoch: epoch, position: position)
    }

    var description: String {
        "\(epoch).\(position)"
    }
}
