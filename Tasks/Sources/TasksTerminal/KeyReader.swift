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
                switch readOnce(into: &buffer) {
                case .idle: continue
                case .keys(let decoded): if !decoded.isEmpty { keys(decoded) }
                case .closed:
                    closed()
                    return
                }
            }
        }
        thread.name = "tasks-keys"
        thread.start()
    }

    private enum Read {
        /// Nothing to read yet (or interrupted): look at `stopping` and go on.
        case idle
        case keys([Key])
        /// The input ended or failed.
        case closed
    }

    /// Waits a tenth of a second at most for input, so that `stop` is seen soon, and decodes
    /// what one read brings.
    private func readOnce(into buffer: inout [UInt8]) -> Read {
        var watched = pollfd(fd: input, events: Int16(POLLIN), revents: 0)
        switch poll(&watched, 1, 100) {
        case 0: return .idle
        case ..<0: return errno == EINTR ? .idle : .closed
        default: break
        }
        let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
        if count > 0 { return .keys(KeyDecoder.decode(Array(buffer.prefix(count)))) }
        return count < 0 && (errno == EINTR || errno == EAGAIN) ? .idle : .closed
    }

    /// Stops reading and waits for the thread (a poll's time at most), so that no key is read
    /// once the terminal is given back.
    func stop() {
        stopping.store(true, ordering: .releasing)
        _ = ended.wait(timeout: .now() + .seconds(1))
    }
}
