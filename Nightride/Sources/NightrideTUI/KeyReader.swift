import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads keys on a thread of its own: `read` blocks, and a blocked task would hold one of the
/// few threads of the cooperative pool that the client's networking needs.
final class KeyReader: Sendable {
    private let input: Int32
    private let stopped = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    /// A reader of `input`, idle until ``start(onKeys:onEnd:)``.
    init(input: Int32) {
        self.input = input
    }

    /// Starts the thread, which calls `onKeys` for each batch read, and `onEnd` once when the
    /// input closes or fails.
    func start(onKeys: @escaping @Sendable ([Key]) -> Void, onEnd: @escaping @Sendable () -> Void) {
        let thread = Thread { [self] in
            defer { finished.signal() }
            var buffer = [UInt8](repeating: 0, count: 256)
            // Polls with a short timeout so that `stop` is noticed without closing the input.
            while !stopped.load(ordering: .acquiring) {
                var descriptor = pollfd(fd: input, events: Int16(POLLIN), revents: 0)
                let ready = poll(&descriptor, 1, 50)
                if ready < 0 {
                    if errno == EINTR { continue }
                    onEnd()
                    return
                }
                guard ready > 0 else { continue }
                let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
                if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
                guard count > 0 else {
                    onEnd()
                    return
                }
                let keys = KeyDecoder.decode(Array(buffer[0..<count]))
                if !keys.isEmpty { onKeys(keys) }
            }
        }
        thread.name = "nightride-keys"
        thread.start()
    }

    /// Stops the thread and waits for it (at most one poll interval), so that no key is read
    /// once the terminal is restored.
    func stop() {
        stopped.store(true, ordering: .releasing)
        _ = finished.wait(timeout: .now() + .milliseconds(500))
    }
}
