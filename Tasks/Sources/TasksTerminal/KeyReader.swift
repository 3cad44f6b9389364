import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads the terminal's keys on a thread of its own, since `read` blocks: on a task it would
/// hold one of the cooperative pool's few threads (two, on a two-core machine), which the
/// client's sockets need.
final class KeyReader: Sendable {
    private let input: Int32
    private let stopping = Atomic(false)
    private let ended = DispatchSemaphore(value: 0)

    /// A reader of `input`, idle until ``start(keys:closed:)``.
    init(input: Int32) {
        self.input = input
    }

    /// Starts reading: `keys` gets each read's keys, `closed` is called once if the input ends
    /// or fails.
    func start(keys: @escaping @Sendable ([Key]) -> Void, closed: @escaping @Sendable () -> Void) {
        let thread = Thread { [self] in
            defer { ended.signal() }
            var buffer = [UInt8](repeating: 0, count: 512)
            while !stopping.load(ordering: .acquiring) {
                // A short poll, so that `stop` is seen within a tenth of a second.
                var descriptor = pollfd(fd: input, events: Int16(POLLIN), revents: 0)
                let ready = poll(&descriptor, 1, 100)
                if ready < 0 && errno == EINTR { continue }
                if ready < 0 {
                    closed()
                    return
                }
                if ready == 0 { continue }
                let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
                if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
                if count <= 0 {
                    closed()
                    return
                }
                let decoded = KeyDecoder.decode(Array(buffer[0..<count]))
                if !decoded.isEmpty { keys(decoded) }
            }
        }
        thread.name = "tasks-keys"
        thread.start()
    }

    /// Stops reading and waits for the thread (a poll's time at most), so that no key is read
    /// once the terminal is given back.
    func stop() {
        stopping.store(true, ordering: .releasing)
        _ = ended.wait(timeout: .now() + .seconds(1))
    }
}
