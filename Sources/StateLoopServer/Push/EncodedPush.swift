import NIOCore

/// A push encoded once for every socket that gets the same value with the same
/// `lastMutationID`: a change that 10,000 readers follow is encoded, and framed, once.
///
/// ``frame`` is the whole WebSocket text frame as a server sends it (unmasked: a server's frames
/// never are), so a socket's writer hands the same bytes to its connection below NIO's frame
/// encoder, with no per-socket header and no copy: a `ByteBuffer` is copied on write only, and
/// nothing writes to it.
final class EncodedPush: Sendable {
    /// The text frame: its header, then ``payload``.
    let frame: ByteBuffer
    /// The push's text alone, for a connection whose frames go through the frame encoder.
    let payload: ByteBuffer

    convenience init(_ value: StoredValue, lastMutationID: UInt64?) {
        self.init(text: WireMessage.versioned(value, lastMutationID: lastMutationID))
    }

    /// A push of `text`, framed.
    init(text: String) {
        var frame = ByteBuffer()
        frame.reserveCapacity(text.utf8.count + Self.longestHeader)
        let headerBytes = Self.writeTextFrameHeader(length: text.utf8.count, to: &frame)
        frame.writeString(text)
        self.frame = frame
        payload = frame.getSlice(at: frame.readerIndex + headerBytes, length: frame.readableBytes - headerBytes) ?? ByteBuffer(string: text)
    }

    /// The most bytes a server's frame header takes: 2, then 8 for the length.
    static let longestHeader = 10

    /// Writes the header of a final, unmasked text frame of `length` bytes (RFC 6455, 5.2);
    /// returns how many bytes it took.
    @discardableResult
    static func writeTextFrameHeader(length: Int, to buffer: inout ByteBuffer) -> Int {
        let finalText: UInt8 = 0x81
        switch length {
        case ...125:
            return buffer.writeInteger(finalText) + buffer.writeInteger(UInt8(length))
        case ...Int(UInt16.max):
            return buffer.writeInteger(finalText) + buffer.writeInteger(UInt8(126)) + buffer.writeInteger(UInt16(length))
        default:
            return buffer.writeInteger(finalText) + buffer.writeInteger(UInt8(127)) + buffer.writeInteger(UInt64(length))
        }
    }
}
