import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A plain TCP socket to a port on 127.0.0.1, for tests that speak to a server byte by byte
/// (raw HTTP, half-finished requests, WebSocket frames by hand): what every such test needs
/// before it sends its first byte, written once.
public enum LoopbackSocket {
    /// Why a socket could not be made.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// A connected socket's descriptor (the caller closes it). `receiveTimeout` bounds each
    /// blocking read (`SO_RCVTIMEO`); `receiveBufferBytes` makes the receive buffer that small
    /// before connecting, so that a server writing to a socket that does not read backs up soon.
    public static func connected(
        to port: Int, receiveTimeout: Duration? = nil, receiveBufferBytes: Int32? = nil
    ) throws -> Int32 {
        #if canImport(Glibc)
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw Failure(description: "socket: \(errno)") }
        if var size = receiveBufferBytes {
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        if let receiveTimeout {
            let (seconds, attoseconds) = receiveTimeout.components
            var timeout = timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }
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
            let code = errno
            close(descriptor)
            throw Failure(description: "connect to 127.0.0.1:\(port): \(code)")
        }
        return descriptor
    }

    /// A socket bound to a free port on 127.0.0.1 that never listens: connecting to the port is
    /// refused, and no other socket can take the port until the caller closes the descriptor.
    public static func boundWithoutListening() throws -> (descriptor: Int32, port: Int) {
        #if canImport(Glibc)
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw Failure(description: "socket: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard bound else {
            let code = errno
            close(descriptor)
            throw Failure(description: "bind on 127.0.0.1: \(code)")
        }
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }
}
