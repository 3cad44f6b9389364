import Dispatch

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Turns SIGINT, SIGTERM, SIGHUP and SIGWINCH into calls of a handler, off the signal's own
/// context (a dispatch source), until cancelled; their default actions are put back then.
final class SignalWatch {
    private static let watched: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGWINCH]
    private let sources: [any DispatchSourceSignal]

    init(handler: @escaping @Sendable (Int32) -> Void) {
        let queue = DispatchQueue(label: "tasks.signals")
        sources = Self.watched.map { number in
            // Ignored as a signal, so that only the source sees it.
            _ = signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { handler(number) }
            source.resume()
            return source
        }
    }

    func cancel() {
        for source in sources { source.cancel() }
        for number in Self.watched { _ = signal(number, SIG_DFL) }
    }
}
