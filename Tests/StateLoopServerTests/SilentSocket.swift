import Foundation
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A push socket that upgrades and then never reads: the slow reader of the tests. Its receive
/// buffer is made small, so the server's writes back up soon.
final class SilentSocket: Sendable {
    private let descriptor: Int32

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    init(port: Int, path: String, token: String) throws {
        let descriptor = try LoopbackSocket.connected(to: port, receiveBufferBytes: 4_096)
        let request = """
            GET /\(path) HTTP/1.1\r
            Host: 127.0.0.1:\(port)\r
            Upgrade: websocket\r
            Connection: Upgrade\r
            Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r
            Sec-WebSocket-Version: 13\r
            Authorization: Bearer \(token)\r
            \r

            """
        let sent = request.utf8CString.withUnsafeBufferPointer { send(descriptor, $0.baseAddress, $0.count - 1, 0) }
        guard sent > 0 else {
            Glibc.close(descriptor)
            throw Failure(description: "send: \(errno)")
        }
        self.descriptor = descriptor
    }

    /// Reads (and throws away) what arrives until the server ends the connection; `false` if
    /// it is still open after `limit`. Polled without blocking (see
    /// `RawConnection.readUntilClosed(within:)`).
    func waitForEnd(within limit: Duration) async -> Bool {
        let deadline = ContinuousClock.now + limit
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while ContinuousClock.now < deadline {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count == 0 { return true }
            if count < 0, errno != EAGAIN, errno != EWOULDBLOCK, errno != EINTR { return true }
            if count < 0 { try? await Task.sleep(for: .milliseconds(10)) }
        }
        return false
    }

    func close() {
        _ = Glibc.close(descriptor)
    }
}
