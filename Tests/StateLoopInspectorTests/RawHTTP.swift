import Foundation
import TestSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One HTTP/1.1 request over a plain loopback socket, with exactly the headers given: client
/// libraries set `Host` and `Origin` themselves, and answer a refused upgrade with an error that
/// hides its status.
struct RawHTTP {
    /// An answer: its status, its header lines (names lowercased), its body.
    struct Answer: CustomStringConvertible {
        var status: Int
        var headers: [String: String]
        var body: String

        var description: String { "\(status) \(headers) \(body)" }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Sends `GET path` to 127.0.0.1:`port` with `headers` (a `Host` naming 127.0.0.1:`port`
    /// unless `headers` has one; `nil` values leave a header out) and reads the answer's head and
    /// body; gives up after 20 s without a byte.
    static func get(port: Int, _ path: String, headers: [String: String?] = [:]) async throws -> Answer {
        var lines = ["GET \(path) HTTP/1.1"]
        var fields = headers
        if fields["Host"] == nil { fields["Host"] = "127.0.0.1:\(port)" }
        for (name, value) in fields.sorted(by: { $0.key < $1.key }) {
            if let value { lines.append("\(name): \(value)") }
        }
        let request = lines.joined(separator: "\r\n") + "\r\n\r\n"
        return try await withCheckedThrowingContinuation { continuation in
            // Blocking calls, off the concurrency pool.
            Thread.detachNewThread {
                continuation.resume(with: Result { try exchange(port: port, request: request) })
            }
        }
    }

    /// A WebSocket upgrade of `path`, with `headers` besides the upgrade's own.
    static func upgrade(port: Int, _ path: String, headers: [String: String?] = [:]) async throws -> Answer {
        var fields: [String: String?] = [
            "Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version": "13",
        ]
        fields.merge(headers) { $1 }
        return try await get(port: port, path, headers: fields)
    }

    private static func exchange(port: Int, request: String) throws -> Answer {
        let descriptor = try LoopbackSocket.connected(to: port, receiveTimeout: .seconds(20))
        defer { _ = close(descriptor) }
        let bytes = Array(request.utf8)
        guard send(descriptor, bytes, bytes.count, 0) == bytes.count else { throw Failure(description: "send() failed") }

        var received = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            if let answer = parse(received) { return answer }
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else {
                // Closed (or timed out): what came is all there is.
                if let answer = parse(received, closed: true) { return answer }
                throw Failure(description: "no complete answer: \(String(decoding: received, as: UTF8.self))")
            }
            received += buffer[0..<count]
        }
    }

    /// The answer in `bytes` once it is complete: its head, and as much body as
    /// `Content-Length` says (none after a 101; all there is once the connection closed).
    private static func parse(_ bytes: [UInt8], closed: Bool = false) -> Answer? {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let end = text.range(of: "\r\n\r\n") else { return nil }
        var lines = text[..<end.lowerBound].components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { return nil }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let body = String(text[end.upperBound...])
        if status == 101 { return Answer(status: status, headers: headers, body: "") }
        if let length = headers["content-length"].flatMap(Int.init) {
            guard body.utf8.count >= length else { return nil }
        } else if !closed, headers["transfer-encoding"] != nil || headers["connection"] != "close" {
            // Chunked or unsized: wait for the close; a refusal closes after its answer.
            return nil
        }
        return Answer(status: status, headers: headers, body: body)
    }
}
