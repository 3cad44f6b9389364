#if os(Linux)
    import CEpoll
    import Foundation
    import Glibc
    import Synchronization

    /// Push sockets read with plain system calls on one thread: `epoll_wait`, then one `read` per
    /// ready socket into one buffer, and a WebSocket frame header parsed by hand to count each text
    /// frame into a ``FrameTally``. Nothing is allocated per frame.
    ///
    /// Why: the fan-out benchmarks measure the server, and with NIO's channels (``LightSocket``) the
    /// reading process's one event loop spent about 70 ms of CPU per round of 10,000 frames (a
    /// profile of session 14: pipeline hops, the frame decoder's buffers), more than the server's
    /// two loops spent writing them, so the reader was what the rounds measured. What stays here
    /// per frame is the kernel's own receive path, which any client pays.
    ///
    /// The upgrade is a hand-written HTTP/1.1 request whose answer must be 101; the server's
    /// frames are unmasked, and a server's close frame or the end of the connection counts the
    /// socket as closed. Pings are not answered: the kit's server sends none.
    ///
    /// Threading: `open` does the handshakes on a thread of its own; afterwards only the reader
    /// thread touches the sockets and their parsers, until ``stop()`` has joined it.
    public final class RawPushSockets: @unchecked Sendable {
        private let descriptors: [Int32]
        private let epoll: Int32
        private let tally: FrameTally
        private let running = Atomic<Bool>(true)
        private let readerEnded = DispatchSemaphore(value: 0)
        /// Each socket's frame parser, by descriptor. Only the reader thread touches it once
        /// reading started (the handshakes hand it over before the thread starts).
        private var parsers: [FrameParser]

        private init(descriptors: [Int32], epoll: Int32, tally: FrameTally, parsers: [FrameParser]) {
            self.descriptors = descriptors
            self.epoll = epoll
            self.tally = tally
            self.parsers = parsers
        }

        /// Opens one socket per `Authorization` header value on `path` of the server at `port`,
        /// `concurrency` handshakes at a time, and starts reading them.
        public static func open(authorizations: [String], port: Int, path: String, tally: FrameTally, concurrency: Int = 200) async throws
            -> RawPushSockets
        {
            try await withCheckedThrowingContinuation { continuation in
                Thread.detachNewThread {
                    continuation.resume(
                        with: Result {
                            try handshakes(authorizations: authorizations, port: port, path: path, tally: tally, concurrency: concurrency)
                        })
                }
            }
        }

        private static func handshakes(authorizations: [String], port: Int, path: String, tally: FrameTally, concurrency: Int) throws
            -> RawPushSockets
        {
            let epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
            guard epoll >= 0 else { throw SetupFailure(message: "epoll_create1: errno \(errno)") }
            var descriptors: [Int32] = []
            var parsers: [FrameParser] = []
            do {
                for start in stride(from: 0, to: authorizations.count, by: concurrency) {
                    let batch = authorizations[start..<min(start + concurrency, authorizations.count)]
                    // Connect and ask the whole batch first, then read the answers: the server works
                    // on a batch's upgrades at once.
                    var opened: [Int32] = []
                    for authorization in batch {
                        let descriptor = try connectedSocket(port: port)
                        descriptors.append(descriptor)
                        opened.append(descriptor)
                        try send(upgradeRequest(path: path, port: port, authorization: authorization), to: descriptor)
                    }
                    for descriptor in opened {
                        let leftOver = try readUpgradeAnswer(from: descriptor, path: path)
                        if parsers.count <= Int(descriptor) {
                            parsers.append(contentsOf: repeatElement(FrameParser(), count: Int(descriptor) + 1 - parsers.count))
                        }
                        leftOver.withUnsafeBytes { parsers[Int(descriptor)].parse($0, tally: tally) }
                        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
                        var event = epoll_event()
                        event.events = EPOLLIN.rawValue
                        event.data.fd = descriptor
                        guard epoll_ctl(epoll, EPOLL_CTL_ADD, descriptor, &event) == 0 else {
                            throw SetupFailure(message: "epoll_ctl: errno \(errno)")
                        }
                    }
                }
            } catch {
                for descriptor in descriptors { close(descriptor) }
                close(epoll)
                throw error
            }
            let sockets = RawPushSockets(descriptors: descriptors, epoll: epoll, tally: tally, parsers: parsers)
            let thread = Thread { sockets.read() }
            thread.name = "raw-push-reader"
            thread.start()
            return sockets
        }

        /// Stops reading and closes every socket; later calls do nothing. Blocks its thread until
        /// the reader has ended (its `epoll_wait` wakes every 100 ms); a reader still running after
        /// 5 s keeps its descriptors open rather than read ones that may have been reused.
        public func stop() {
            guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
            guard readerEnded.wait(timeout: .now() + 5) == .success else { return }
            for descriptor in descriptors { close(descriptor) }
            close(epoll)
        }

        /// The reader thread: level-triggered, one `read` per ready socket per wake-up.
        private func read() {
            defer { readerEnded.signal() }
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
            defer { buffer.deallocate() }
            var events = [epoll_event](repeating: epoll_event(), count: 1_024)
            while running.load(ordering: .relaxed) {
                let ready = epoll_wait(epoll, &events, Int32(events.count), 100)
                guard ready > 0 else { continue }
                for index in 0..<Int(ready) {
                    let descriptor = events[index].data.fd
                    let count = Glibc.read(descriptor, buffer.baseAddress, buffer.count)
                    if count > 0 {
                        parsers[Int(descriptor)].parse(UnsafeRawBufferPointer(rebasing: buffer[0..<count]), tally: tally)
                    } else if count == 0 || (errno != EAGAIN && errno != EINTR) {
                        epoll_ctl(epoll, EPOLL_CTL_DEL, descriptor, nil)
                        if !parsers[Int(descriptor)].sawClose { tally.socketClosed() }
                    }
                }
            }
        }

        private static func connectedSocket(port: Int) throws -> Int32 {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard descriptor >= 0 else { throw SetupFailure(message: "socket: errno \(errno)") }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else {
                close(descriptor)
                throw SetupFailure(message: "connect to 127.0.0.1:\(port): errno \(errno)")
            }
            // The handshake's answer must come within 30 s.
            var timeout = timeval(tv_sec: 30, tv_usec: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            return descriptor
        }

        private static func upgradeRequest(path: String, port: Int, authorization: String) -> String {
            "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: c3RhdGVsb29wLWJlbmNoIQ==\r\nSec-WebSocket-Version: 13\r\nAuthorization: \(authorization)\r\n\r\n"
        }

        private static func send(_ text: String, to descriptor: Int32) throws {
            var bytes = Array(text.utf8)
            var sent = 0
            while sent < bytes.count {
                let count = bytes.withUnsafeMutableBytes { Glibc.write(descriptor, $0.baseAddress! + sent, $0.count - sent) }
                guard count > 0 else { throw SetupFailure(message: "write of an upgrade request: errno \(errno)") }
                sent += count
            }
        }

        /// Reads the answer's head; returns the bytes after it (the first frame often shares the
        /// read with the 101).
        private static func readUpgradeAnswer(from descriptor: Int32, path: String) throws -> [UInt8] {
            var received: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4_096)
            let end: [UInt8] = Array("\r\n\r\n".utf8)
            while true {
                let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
                guard count > 0 else {
                    let error = errno
                    throw SetupFailure(
                        message:
                            "no answer to a push socket's upgrade on \(path) (errno \(error), \(received.count) bytes: \(String(decoding: received.prefix(200), as: UTF8.self)))"
                    )
                }
                received.append(contentsOf: chunk[0..<count])
                guard let headEnd = received.firstRange(of: end) else { continue }
                let head = String(decoding: received[..<headEnd.lowerBound], as: UTF8.self)
                guard head.hasPrefix("HTTP/1.1 101") else {
                    throw SetupFailure(message: "the server refused a push socket's upgrade on \(path): \(head.prefix(while: { $0 != "\r" }))")
                }
                return Array(received[headEnd.upperBound...])
            }
        }
    }

    /// One socket's place in the server's stream of frames: the header being read, or how much of
    /// a payload is left to skip. A pure state machine over the bytes read.
    struct FrameParser {
        private var header: (UInt64, UInt64) = (0, 0)
        private var headerCount = 0
        private var remaining = 0
        private var length = 0
        private var opcode: UInt8 = 0
        private(set) var sawClose = false

        /// Counts the frames `bytes` completes: text and binary frames as arrivals, a close as the
        /// socket's end.
        mutating func parse(_ bytes: UnsafeRawBufferPointer, tally: FrameTally) {
            var index = 0
            while index < bytes.count {
                if remaining > 0 {
                    let skipped = min(remaining, bytes.count - index)
                    remaining -= skipped
                    index += skipped
                    if remaining == 0 { finish(tally) }
                    continue
                }
                append(bytes[index])
                index += 1
                guard let length = headerLength() else { continue }
                opcode = byte(0) & 0x0F
                headerCount = 0
                remaining = length
                self.length = length
                if length == 0 { finish(tally) }
            }
        }

        private mutating func finish(_ tally: FrameTally) {
            switch opcode {
            case 0x1, 0x2: tally.frameArrived(bytes: length)
            case 0x8:
                if !sawClose { tally.socketClosed() }
                sawClose = true
            default: break
            }
        }

        /// The payload's length once the header is complete (RFC 6455, 5.2), else `nil`.
        private func headerLength() -> Int? {
            guard headerCount >= 2 else { return nil }
            let short = Int(byte(1) & 0x7F)
            let masked = byte(1) & 0x80 != 0
            let lengthBytes = short == 126 ? 2 : short == 127 ? 8 : 0
            guard headerCount == 2 + lengthBytes + (masked ? 4 : 0) else { return nil }
            guard lengthBytes > 0 else { return short }
            var length = 0
            for offset in 0..<lengthBytes { length = length << 8 | Int(byte(2 + offset)) }
            return length
        }

        private mutating func append(_ value: UInt8) {
            let shift = UInt64(8 * (headerCount % 8))
            if headerCount < 8 { header.0 |= UInt64(value) << shift } else { header.1 |= UInt64(value) << shift }
            if headerCount == 0 { header = (UInt64(value), 0) }
            headerCount += 1
        }

        private func byte(_ offset: Int) -> UInt8 {
            UInt8(truncatingIfNeeded: (offset < 8 ? header.0 : header.1) >> UInt64(8 * (offset % 8)))
        }
    }
#endif
