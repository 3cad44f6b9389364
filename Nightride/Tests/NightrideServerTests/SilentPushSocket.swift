import Foundation
import TestSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A push socket whose client upgrades, then never reads or writes again: it does not answer
/// the server's close frame, as a frozen or vanished app would not. Plain POSIX calls, so that
/// no client library answers on its behalf.
final class SilentPushSocket: Sendable {
    private let descriptor: Int32

    /// Connects to `port` on loopback and upgrades `path` with `token`; throws unless the server
    /// answers 101 within 20 s (a hang guard for a loaded machine).
    init(port: Int, path: String, token: String) throws {
        let descriptor = try LoopbackSocket.connected(to: port, receiveTimeout: .seconds(20))
        self.descriptor = descriptor
        let request =
            "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
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
