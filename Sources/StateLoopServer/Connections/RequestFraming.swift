/// Where a connection's requests stand, read from its bytes as they arrive: between requests,
/// inside a request head, or inside a body (by `Content-Length` or chunked). A pure value, so
/// that ``RequestHeadGuard`` can time each part of each request, and refuse what HTTP/1 does
/// not allow before the HTTP decoder, which answers nothing for a first request, sees it.
///
/// It checks the framing only: the request line's shape, each header line's shape (a token,
/// a colon), the two headers that say where a body ends, and a chunked body's sizes. The
/// decoder behind it parses the request itself.
struct RequestFraming {
    /// Where the connection stands after the bytes scanned so far.
    enum Phase: Equatable {
        /// Between requests (or before the first): nothing of a request has come.
        case idle
        /// Inside a request head.
        case head
        /// Inside a request body.
        case body
    }

    /// What a scan found.
    enum Verdict: Equatable {
        /// Everything scanned is well framed; ``phase`` says where it stands.
        case ok
        /// A head asked for a protocol upgrade (a WebSocket): what follows it is not HTTP, and
        /// is not framed here any more.
        case upgrade
        /// A head longer than the limit.
        case tooLarge
        /// A first line that is not an HTTP/1 request line.
        case notHTTP
        /// A header line HTTP/1 does not allow, or a body whose framing cannot be read.
        case malformed(String)
    }

    private enum State: Equatable {
        case idle
        case head
        case body(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailers
    }

    private var state = State.idle
    /// The bytes of the head so far, against the limit.
    private var headBytes = 0
    /// The line being read (a request line, a header, a chunk size or a trailer).
    private var line: [UInt8] = []
    private var isFirstLine = true
    /// Line-end bytes before the next request line.
    private var leadingBlank = 0
    private var contentLength: Int?
    private var isChunked = false
    private var upgrades = false
    /// Requests whose head and body have come whole.
    private(set) var completed = 0

    /// Where the connection stands now.
    var phase: Phase {
        switch state {
        case .idle: .idle
        case .head: .head
        case .body, .chunkSize, .chunkData, .chunkDataEnd, .trailers: .body
        }
    }

    /// Follows `bytes`; stops at the first verdict other than `.ok`. A body's bytes are counted
    /// in runs, not looked at one by one: only heads and chunk sizes are read.
    mutating func scan<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes, headLimit: Int) -> Verdict {
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let byte = bytes[index]
            switch state {
            case .body(let remaining):
                let run = min(remaining, bytes.distance(from: index, to: bytes.endIndex))
                index = bytes.index(index, offsetBy: run)
                finishBody(after: remaining - run)
                continue
            case .chunkData(let remaining):
                let run = min(remaining, bytes.distance(from: index, to: bytes.endIndex))
                index = bytes.index(index, offsetBy: run)
                state = remaining > run ? .chunkData(remaining: remaining - run) : .chunkDataEnd
                continue
            default:
                index = bytes.index(after: index)
            }
            switch state {
            case .idle:
                // One empty line before a request line is allowed (and ignored); more are not a
                // request, and would let a client hold its connection by sending nothing else.
                if byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\n") {
                    leadingBlank += 1
                    if leadingBlank > 2 { return .notHTTP }
                    continue
                }
                leadingBlank = 0
                startHead()
                if let verdict = headByte(byte, limit: headLimit) { return verdict }
            case .head:
                if let verdict = headByte(byte, limit: headLimit) { return verdict }
            case .body, .chunkData:
                break  // counted in runs above
            case .chunkSize:
                if byte == UInt8(ascii: "\n") {
                    guard let size = Self.chunkSize(line) else { return .malformed("a chunk size that does not read") }
                    line.removeAll(keepingCapacity: true)
                    state = size == 0 ? .trailers : .chunkData(remaining: size)
                } else {
                    line.append(byte)
                    if line.count > 1_024 { return .malformed("a chunk size line over 1,024 bytes") }
                }
            case .chunkDataEnd:
                if byte == UInt8(ascii: "\n") {
                    state = .chunkSize
                } else if byte != UInt8(ascii: "\r") {
                    return .malformed("a chunk not followed by its line end")
                }
            case .trailers:
                if byte == UInt8(ascii: "\n") {
                    let isEnd = line.isEmpty || line == [UInt8(ascii: "\r")]
                    line.removeAll(keepingCapacity: true)
                    if isEnd { requestDone() }
                } else {
                    line.append(byte)
                    if line.count > 8_192 { return .malformed("a trailer over 8,192 bytes") }
                }
            }
        }
        return .ok
    }

    private mutating func startHead() {
        state = .head
        headBytes = 0
        line.removeAll(keepingCapacity: true)
        isFirstLine = true
        contentLength = nil
        isChunked = false
        upgrades = false
    }

    private mutating func finishBody(after remaining: Int) {
        if remaining > 0 {
            state = .body(remaining: remaining)
        } else {
            requestDone()
        }
    }

    private mutating func requestDone() {
        state = .idle
        completed += 1
    }

    /// One byte of a head; a verdict when the head is refused or asks for an upgrade.
    private mutating func headByte(_ byte: UInt8, limit: Int) -> Verdict? {
        headBytes += 1
        if headBytes > limit { return .tooLarge }
        guard byte == UInt8(ascii: "\n") else {
            line.append(byte)
            return nil
        }
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        defer { line.removeAll(keepingCapacity: true) }
        if isFirstLine {
            isFirstLine = false
            return Self.isRequestLine(line) ? nil : .notHTTP
        }
        if line.isEmpty { return headDone() }
        return header(line)
    }

    /// The end of a head: where its body ends, or an upgrade.
    private mutating func headDone() -> Verdict? {
        if upgrades { return .upgrade }
        if isChunked {
            state = .chunkSize
        } else {
            finishBody(after: contentLength ?? 0)
        }
        return nil
    }

    /// A header line: `name: value`, the name a token. Notes the headers that frame the body.
    private mutating func header(_ line: [UInt8]) -> Verdict? {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > 0,
            line[..<colon].allSatisfy(Self.isTokenCharacter)
        else {
            // Folded lines (a leading space) are obsolete, and a line without a name is not a
            // header: both were how a client held its connection with no answer.
            return .malformed("a header line that is not 'name: value'")
        }
        let name = String(decoding: line[..<colon], as: UTF8.self).lowercased()
        let value = String(decoding: line[(colon + 1)...], as: UTF8.self).trimmingSpaces
        switch name {
        case "content-length":
            guard let length = Int(value), length >= 0, contentLength == nil || contentLength == length else {
                return .malformed("a Content-Length that does not read as one length")
            }
            contentLength = length
        case "transfer-encoding":
            if value.lowercased().split(separator: ",").contains(where: { $0.trimmingSpaces == "chunked" }) { isChunked = true }
        case "upgrade":
            upgrades = true
        default:
            break
        }
        if isChunked && contentLength != nil {
            // Either may end the body: a request smuggling one inside the other is refused.
            return .malformed("both Content-Length and chunked Transfer-Encoding")
        }
        return nil
    }

    /// `METHOD target HTTP/1.x`, with a method of capital letters.
    static func isRequestLine(_ line: [UInt8]) -> Bool {
        let trimmed = line.last == UInt8(ascii: "\r") ? line.dropLast() : line[...]
        let parts = trimmed.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard parts.count == 3, (1...20).contains(parts[0].count),
            parts[0].allSatisfy({ (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }),
            !parts[1].isEmpty
        else { return false }
        return parts[2].elementsEqual("HTTP/1.1".utf8) || parts[2].elementsEqual("HTTP/1.0".utf8)
    }

    /// A chunk's size: hexadecimal digits, then optional extensions after `;`.
    private static func chunkSize(_ line: [UInt8]) -> Int? {
        let trimmed = line.last == UInt8(ascii: "\r") ? line.dropLast() : line[...]
        let digits = trimmed.prefix { $0 != UInt8(ascii: ";") }
        let text = String(decoding: digits, as: UTF8.self).trimmingSpaces
        guard !text.isEmpty, text.count <= 15 else { return nil }
        return Int(text, radix: 16)
    }

    /// RFC 9110's `tchar`.
    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }
}

extension StringProtocol {
    /// Without the spaces and tabs around it.
    fileprivate var trimmingSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
