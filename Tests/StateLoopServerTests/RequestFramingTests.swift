import Testing

@testable import StateLoopServer

/// The framing of a connection's requests is the same however its bytes are cut into reads.
@Suite("Sync server: request framing")
struct RequestFramingTests {
    static let requests = Array(
        ("POST /a HTTP/1.1\r\nContent-Length: 11\r\n\r\nhello world"
            + "POST /b HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;x=1\r\n world\r\n0\r\nT: t\r\n\r\n"
            + "\r\nGET /c HTTP/1.1\r\nHost: x\r\n\r\n").utf8)

    @Test("three requests (a body by length, a chunked one, none) in one read, byte by byte, and in reads of 7 bytes")
    func sameInEveryCut() {
        for size in [Self.requests.count, 1, 7] {
            var framing = RequestFraming()
            var start = 0
            while start < Self.requests.count {
                let end = min(start + size, Self.requests.count)
                #expect(framing.scan(Self.requests[start..<end], headLimit: 1_000) == .ok, "reads of \(size)")
                start = end
            }
            #expect(framing.completed == 3, "reads of \(size)")
            #expect(framing.phase == .idle, "reads of \(size)")
        }
    }
}
