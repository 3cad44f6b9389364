import Foundation
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
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw Failure(description: "socket: \(errno)") }
        var size: Int32 = 4_096
        setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            Glibc.close(descriptor)
            throw Failure(description: "connect: \(errno)")
        }
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
