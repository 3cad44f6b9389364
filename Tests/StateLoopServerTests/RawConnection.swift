import Foundation
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A plain TCP connection to the test server, for requests no HTTP client would send.
final class RawConnection {
    private let descriptor: Int32
    /// Bytes read past what ``read(through:within:)`` returned, for the next read.
    private var leftover: [UInt8] = []

    /// A connection to `port` on loopback; with `receiveBufferBytes`, its receive buffer is
    /// made that small before it connects, so that a server writing to it backs up soon.
    init(port: Int, receiveBufferBytes: Int32? = nil) throws {
        descriptor = try LoopbackSocket.connected(to: port, receiveBufferBytes: receiveBufferBytes)
    }

    deinit {
        Glibc.close(descriptor)
    }

    /// Ends the connection from this side, as a client that goes away does.
    func close() {
        shutdown(descriptor, Int32(SHUT_RDWR))
    }

    /// Sends `bytes`; `false` if the server had already closed the connection.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    /// Sends `bytes` without blocking a thread while the server does not take them; `false` if
    /// the connection ended first or they were not all sent within `limit`.
    func send(_ bytes: [UInt8], within limit: Duration) async -> Bool {
        let deadline = ContinuousClock.now + limit
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            if count > 0 {
                sent += count
            } else if count < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR, ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(5))
            } else {
                return false
            }
        }
        return true
    }

    /// What the server sent up to and including `marker` (an HTTP head's blank line, say), or
    /// `nil` if it did not come within `limit` or the connection ended first.
    func read(through marker: String, within limit: Duration) async -> [UInt8]? {
        let marker = Array(marker.utf8)
        let deadline = ContinuousClock.now + limit
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while true {
            if let end = Self.end(of: marker, in: leftover) {
                defer { leftover.removeFirst(end) }
                return Array(leftover[..<end])
            }
            guard ContinuousClock.now < deadline else { return nil }
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count > 0 {
                leftover += buffer[..<count]
            } else if count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                return nil
            } else {
                try? await Task.sleep(for: .milliseconds(5))
            }
        }
    }

    /// Everything the server sends until it closes the connection, and whether it closed it
    /// within `limit`. Polled without blocking: a blocking read would hold one of the few
    /// threads Swift concurrency has (as many as cores) while the server it waits for needs
    /// them, which stalled every test in the process on a 2-core machine.
    func readUntilClosed(within limit: Duration) async -> (text: String, closed: Bool) {
        let (bytes, closed) = await readBytesUntilClosed(within: limit)
        return (String(decoding: bytes, as: UTF8.self), closed)
    }

    /// ``readUntilClosed(within:)``'s bytes, as they came (WebSocket frames are binary).
    func readBytesUntilClosed(within limit: Duration) async -> (bytes: [UInt8], closed: Bool) {
        let deadline = ContinuousClock.now + limit
        var received = leftover
        leftover = []
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while ContinuousClock.now < deadline {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count > 0 {
                received += buffer[..<count]
            } else if count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                return (received, true)
            } else {
                try? await Task.sleep(for: .milliseconds(10))
            }
        }
        return (received, false)
    }

    private static func end(of marker: [UInt8], in bytes: [UInt8]) -> Int? {
        guard bytes.count >= marker.count else { return nil }
        for start in 0...(bytes.count - marker.count) where bytes[start..<(start + marker.count)].elementsEqual(marker) {
            return start + marker.count
        }
        return nil
    }
}

/// WebSocket frames as bytes, for a ``RawConnection``: what a client sends, right or wrong, and
/// what the server answers.
enum RawFrames {
    static let ping: UInt8 = 0x9
    static let pong: UInt8 = 0xA
    static let close: UInt8 = 0x8
    static let text: UInt8 = 0x1

    /// A push socket's upgrade request for `path`, with `token`.
    static func upgrade(_ path: String, token: String) -> [UInt8] {
        Array(
            ("GET /\(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer \(token)\r\n\r\n").utf8)
    }

    /// One frame as a client would send it: masked unless told otherwise, with the reserved
    /// bits `reserved` (0x40, 0x20, 0x10) set.
    static func client(_ opcode: UInt8, _ payload: [UInt8] = [], masked: Bool = true, reserved: UInt8 = 0) -> [UInt8] {
        var bytes: [UInt8] = [0x80 | reserved | opcode]
        let maskBit: UInt8 = masked ? 0x80 : 0
        if payload.count < 126 {
            bytes.append(maskBit | UInt8(payload.count))
        } else {
            precondition(payload.count <= 0xFFFF, "a test frame is short")
            bytes += [maskBit | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        }
        guard masked else { return bytes + payload }
        let key: [UInt8] = [0x1A, 0x2B, 0x3C, 0x4D]
        return bytes + key + payload.enumerated().map { $0.element ^ key[$0.offset % 4] }
    }

    /// A frame the server sent.
    struct Frame: CustomStringConvertible {
        let opcode: UInt8
        let payload: [UInt8]

        /// A close frame's code.
        var closeCode: Int? {
            guard opcode == RawFrames.close, payload.count >= 2 else { return nil }
            return Int(payload[0]) << 8 | Int(payload[1])
        }

        var description: String { "frame \(opcode) of \(payload.count) bytes\(closeCode.map { ", code \($0)" } ?? "")" }
    }

    /// The frames in `bytes`, which the server sent (unmasked) after its upgrade's answer; a
    /// frame cut short at the end is left out.
    static func server(_ bytes: [UInt8]) -> [Frame] {
        var frames: [Frame] = []
        var index = 0
        while index + 2 <= bytes.count {
            let opcode = bytes[index] & 0x0F
            var length = Int(bytes[index + 1] & 0x7F)
            var start = index + 2
            if length == 126 {
                guard start + 2 <= bytes.count else { break }
                length = Int(bytes[start]) << 8 | Int(bytes[start + 1])
                start += 2
            } else if length == 127 {
                guard start + 8 <= bytes.count else { break }
                length = bytes[start..<(start + 8)].reduce(0) { $0 << 8 | Int($1) }
                start += 8
            }
            guard start + length <= bytes.count else { break }
            frames.append(Frame(opcode: opcode, payload: Array(bytes[start..<(start + length)])))
            index = start + length
        }
        return frames
    }
}
