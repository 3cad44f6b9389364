import Foundation
import NIOCore
import NIOEmbedded
import NIOWebSocket
import StateLoopWire
import Testing

@testable import StateLoopServer

/// A push encoded and framed once is written below NIO's frame encoder, so its header is ours:
/// NIO's own decoder must read it as the text frame the encoder would have made.
@Suite("Pushes framed once")
struct EncodedPushTests {
    @Test(
        "a header for each length form (7-bit, 16-bit, 64-bit), at each boundary, decodes to the payload",
        arguments: [0, 125, 126, 65_535, 65_536, 200_000])
    func headerSizes(payloadLength: Int) throws {
        let payload = ByteBuffer(repeating: UInt8(ascii: "x"), count: payloadLength)
        var frame = ByteBuffer()
        let headerBytes = EncodedPush.writeTextFrameHeader(length: payloadLength, to: &frame)
        #expect(headerBytes == (payloadLength <= 125 ? 2 : payloadLength <= 65_535 ? 4 : 10), "not the shortest form")
        frame.writeImmutableBuffer(payload)
        #expect(try decoded(frame) == payload)
    }

    @Test("a push's shared frame decodes to the push's text, and its payload is that text")
    func pushFrame() throws {
        let value = StoredValue(
            key: ResourceKey(resource: "notice", id: "all"), version: Version(epoch: 1, counter: 7), json: Data(#""a notice""#.utf8)
        )
        let push = EncodedPush(value, lastMutationID: 3)
        let text = ByteBuffer(string: WireMessage.versioned(value, lastMutationID: 3))
        #expect(push.payload == text)
        #expect(try decoded(push.frame) == text)
    }

    /// The one frame NIO's decoder reads from `bytes`: final, text, unmasked.
    private func decoded(_ bytes: ByteBuffer) throws -> ByteBuffer {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: 1 << 20)))
        defer { _ = try? channel.finish() }
        try channel.writeInbound(bytes)
        let frame = try #require(try channel.readInbound(as: WebSocketFrame.self), "no frame decoded")
        #expect(frame.fin && frame.opcode == .text && frame.maskKey == nil)
        #expect(try channel.readInbound(as: WebSocketFrame.self) == nil, "more than one frame")
        return frame.unmaskedData
    }
}
