#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Gives the terminal back if the process dies of a fatal signal (a trap, a crash) while it
/// is taken over, then lets the signal do what it would have: a crash must not also leave the
/// user's shell raw and on the alternate screen.
///
/// A signal handler may only do what is async-signal-safe (`tcsetattr`, `write`, `signal`,
/// `raise`) on memory set up beforehand: hence the fixed storage below, written before the
/// handlers are installed and left alone while they are.
enum CrashGuard {
    private static let fatal: [Int32] = [SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE]
    // Written by `arm` before any handler is installed, only read by the handlers.
    nonisolated(unsafe) private static var settings = termios()
    nonisolated(unsafe) private static var input: Int32 = -1
    nonisolated(unsafe) private static var output: Int32 = -1
    /// The bytes of `RawTerminal.leave`, copied once so that a handler allocates nothing.
    nonisolated(unsafe) private static var leave: UnsafeMutableBufferPointer<UInt8> = {
        let bytes = Array(RawTerminal.leave.utf8)
        let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: bytes.count)
        _ = buffer.initialize(from: bytes)
        return buffer
    }()

    /// Installs the handlers, which restore `settings` on `input` and leave the screen modes
    /// on `output`.
    static func arm(input: Int32, output: Int32, settings: termios) {
        _ = leave
        Self.settings = settings
        Self.input = input
        Self.output = output
        for number in fatal {
            _ = signal(number) { number in
                _ = write(CrashGuard.output, CrashGuard.leave.baseAddress, CrashGuard.leave.count)
                _ = tcsetattr(CrashGuard.input, TCSAFLUSH, &CrashGuard.settings)
                _ = signal(number, SIG_DFL)
                _ = raise(number)
            }
        }
    }

    /// Puts the default handlers back, once the terminal is restored.
    static func disarm() {
        for number in fatal { _ = signal(number, SIG_DFL) }
    }
}
