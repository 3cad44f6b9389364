import Testing

@testable import StateLoopServer

/// The kit's own SHA-256, which sessions keep their secrets' digests with.
@Suite("SHA-256")
struct SHA256Tests {
    @Test("SHA-256 gives the standard's digests, across block boundaries")
    func vectors() {
        #expect(SHA256.hex("".utf8) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex("abc".utf8) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            SHA256.hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        let twoBlocks = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"
        #expect(SHA256.hex(twoBlocks.utf8) == "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1")
        // 55 and 56 bytes: the last length that fits the first block's padding, and the first
        // that needs a second block.
        #expect(SHA256.hex(Array(repeating: UInt8(ascii: "a"), count: 55)) == "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318")
        #expect(SHA256.hex(Array(repeating: UInt8(ascii: "a"), count: 56)) == "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a")
        #expect(
            SHA256.hex(Array(repeating: UInt8(ascii: "a"), count: 1_000_000)) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test("Sessions.digest(of:) is the SHA-256 of the text's UTF-8 bytes in lowercase hexadecimal, as an app's own stored tokens need")
    func publicDigest() {
        #expect(Sessions.digest(of: "abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(Sessions.digest(of: "é") == SHA256.hex([0xC3, 0xA9]))
    }
}
