import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A plain TCP connection to the test server, for requests no HTTP client would send.
final class RawConnection {
    private let descriptor: Int32

    init(port: Int) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            Glibc.close(descriptor)
            throw SilentSocket.Failure(description: "connect: \(errno)")
        }
    }

    deinit {
        Glibc.close(descriptor)
    }

    /// Sends `bytes`; `false` if the server had already closed the connection.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    /// Everything the server sends until it closes the connection, and whether it closed it
    /// within `limit`. Polled without blocking: a blocking read would hold one of the few
    /// threads Swift concurrency has (as many as cores) while the server it waits for needs
    /// them, which stalled every test in the process on a 2-core machine.
    func readUntilClosed(within limit: Duration) async -> (text: String, closed: Bool) {
        let deadline = ContinuousClock.now + limit
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while ContinuousClock.now < deadline {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count > 0 {
                received += buffer[..<count]
            } else if count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                return (String(decoding: received, as: UTF8.self), true)
            } else {
                try? await Task.sleep(for: .milliseconds(10))
            }
        }
        return (String(decoding: received, as: UTF8.self), false)
    }
}
