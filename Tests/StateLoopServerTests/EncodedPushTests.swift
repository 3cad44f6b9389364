import Foundation
import NIOCore
import NIOEmbedded
import NIOWebSocket
@testable import StateLoopServer
import StateLoopWire
import Testing

/// A push encoded and framed once is written below NIO's frame encoder, so its header is ours:
/// NIO's own decoder must read it as the text frame the encoder would have made.
@Suite("Pushes framed once")
struct EncodedPushTests {
    @Test("a frame of each header size (7-bit, 16-bit and 64-bit lengths) decodes to the push's text", arguments: [0, 125, 126, 65_535, 65_536, 200_000])
    func decodes(length: Int) throws {
        let value = StoredValue(
            key: ResourceKey(resource: "notice", id: "all"), version: Version(epoch: 1, counter: 7),
            json: Data(("\"" + String(repeating: "x", count: length) + "\"").utf8)
        )
        let push = EncodedPush(value, lastMutationID: 3)
        let text = WireMessage.versioned(value, lastMutationID: 3)
        #expect(push.payload == ByteBuffer(string: text))

        let channel = EmbeddedChannel(handler: ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: 1 << 20)))
        try channel.writeInbound(push.frame)
        let frame = try #require(try channel.readInbound(as: WebSocketFrame.self), "no frame decoded")
        #expect(frame.fin && frame.opcode == .text && frame.maskKey == nil)
        #expect(frame.unmaskedData == ByteBuffer(string: text))
        #expect(try channel.readInbound(as: WebSocketFrame.self) == nil, "more than one frame")
        _ = try channel.finish()
    }
}
