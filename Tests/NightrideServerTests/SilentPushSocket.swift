#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A push socket whose client upgrades, then never reads or writes again: it does not answer
/// the server's close frame, as a frozen or vanished app would not. Plain POSIX calls, so that
/// no client library answers on its behalf.
final class SilentPushSocket: Sendable {
    private let descriptor: Int32

    /// Connects to `port` on loopback and upgrades `path` with `token`; throws unless the server
    /// answers 101 within 5 s.
    init(port: Int, path: String, token: String) throws {
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw Failure(description: "socket() failed") }
        self.descriptor = descriptor
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Failure(description: "connect() failed") }
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer \(token)\r\n\r\n"
        let bytes = Array(request.utf8)
        guard send(descriptor, bytes, bytes.count, 0) == bytes.count else { throw Failure(description: "send() failed") }
        var head = [UInt8]()
        var byte: UInt8 = 0
        while !head.ends(with: Array("\r\n\r\n".utf8)) {
            guard recv(descriptor, &byte, 1, 0) == 1 else { throw Failure(description: "no answer to the upgrade") }
            head.append(byte)
        }
        let status = String(decoding: head, as: UTF8.self)
        guard status.hasPrefix("HTTP/1.1 101") else { throw Failure(description: "upgrade refused: \(status)") }
    }

    /// Closes the client's end.
    func close() {
        #if canImport(Glibc)
        _ = Glibc.close(descriptor)
        #else
        _ = Darwin.close(descriptor)
        #endif
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }
}

extension Array where Element: Equatable {
    fileprivate func ends(with suffix: [Element]) -> Bool {
        count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix
    }
}
