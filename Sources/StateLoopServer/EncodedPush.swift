import NIOCore

/// A push's text, encoded once for every socket that gets the same value with the same
/// `lastMutationID`: a change that 10,000 readers follow is encoded once, and each socket's
/// frame shares its bytes (a `ByteBuffer` is copied on write only, and nothing writes to it).
final class EncodedPush: Sendable {
    let payload: ByteBuffer

    init(_ value: StoredValue, lastMutationID: UInt64?) {
        payload = ByteBuffer(string: WireMessage.versioned(value, lastMutationID: lastMutationID))
    }
}
