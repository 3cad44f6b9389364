import Foundation
import NightrideModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// HTTP requests to a server on 127.0.0.1 sent from another loopback address (127.0.0.2, say),
/// so that a test can be two clients the server tells apart by their address: the whole of
/// 127.0.0.0/8 is loopback on Linux. Plain POSIX calls: URLSession cannot choose the address it
/// sends from. One request per connection (`Connection: close`), read to its end.
struct AddressedClient: Sendable {
    let port: Int
    let source: String

    /// Whether this machine lets a socket send from `address` (Linux does for all of
    /// 127.0.0.0/8; macOS only for the addresses configured on lo0).
    static func canSend(from address: String) -> Bool {
        guard let descriptor = try? bound(to: address) else { return false }
        close(descriptor)
        return true
    }

    /// `POST /login` with `name` and `password`: the status, the `Retry-After` header and the
    /// body.
    func login(_ name: String, _ password: String?) async throws -> (status: Int, retryAfter: Int?, body: Data) {
        let body = try JSONEncoder().encode(LoginRequest(name: name, password: password))
        let head =
            "POST /login HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        return try await offThePool { try exchange(head, body: body) }
    }

    /// The token of a successful `POST /login`, which must answer 200.
    func token(_ name: String, _ password: String) async throws -> String {
        let (status, _, body) = try await login(name, password)
        guard status == 200 else { throw Failure(description: "sign-in of \(name) from \(source) answered \(status)") }
        return try JSONDecoder().decode(LoginResponse.self, from: body).token
    }

    /// The status of `GET path` with `token` as the bearer.
    func status(of path: String, token: String) async throws -> Int {
        let head = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAuthorization: Bearer \(token)\r\nConnection: close\r\n\r\n"
        return try await offThePool { try exchange(head, body: Data()).status }
    }

    /// Blocking socket calls on a thread of their own: on the cooperative pool (two threads on
    /// a two-core machine) they could hold the threads the server needs to answer them.
    private func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try work() }) }.start()
        }
    }

    private func exchange(_ head: String, body: Data) throws -> (status: Int, retryAfter: Int?, body: Data) {
        let descriptor = try Self.bound(to: source)
        defer { close(descriptor) }
        // Bounded, and generous for a loaded machine: a hang fails the test rather than stalls it.
        var timeout = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = Self.address("127.0.0.1", port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Failure(description: "connect() failed: \(errno)") }
        let bytes = Array(head.utf8) + Array(body)
        guard send(descriptor, bytes, bytes.count, 0) == bytes.count else { throw Failure(description: "send() failed") }
        var answer = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else {
                if count < 0 { throw Failure(description: "recv() failed: \(errno)") }
                break
            }
            answer += buffer[0..<count]
        }
        guard let end = answer.firstRange(of: Array("\r\n\r\n".utf8)) else { throw Failure(description: "no HTTP head in \(answer.count) bytes") }
        let lines = String(decoding: answer[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        guard let statusLine = lines.first, let status = Int(statusLine.split(separator: " ").dropFirst().first ?? "") else {
            throw Failure(description: "no status in \(lines.first ?? "")")
        }
        let retryAfter = lines.dropFirst().first { $0.lowercased().hasPrefix("retry-after:") }
            .flatMap { Int($0.dropFirst("retry-after:".count).trimmingCharacters(in: .whitespaces)) }
        return (status, retryAfter, Data(answer[end.upperBound...]))
    }

    private static func address(_ ip: String, port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr(ip)
        return address
    }

    /// A TCP socket bound to `source` on a port the system picks.
    private static func bound(to source: String) throws -> Int32 {
        #if canImport(Glibc)
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw Failure(description: "socket() failed") }
        var local = address(source, port: 0)
        let result = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            close(descriptor)
            throw Failure(description: "bind(\(source)) failed: \(errno)")
        }
        return descriptor
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }
}
