#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes `line` to standard output straight through the file descriptor, so that it is out
/// before the next step runs: what a crash child tells the test that will kill it.
public func report(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes[offset...].withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        guard written > 0 else { exit(3) }
        offset += written
    }
}
