import Foundation

/// Reads an HTTP `Retry-After` header defensively: the value comes from the server (or a proxy in
/// between), and a wait that cannot be represented must not crash the client.
/// (`Duration.seconds(Double)` traps on a NaN or an infinite value, which `Double("nan")` and
/// `Double("1e400")` are.)
enum RetryAfter {
    /// The longest wait honoured, in seconds: a server asking for more is asked again after an
    /// hour, since a wait of days would make the resource look dead.
    static let maximumSeconds: Double = 3600

    /// The wait `header` asks for, or `nil` when it is missing or unusable.
    ///
    /// Accepts a non-negative number of seconds, whole or decimal (`120`, `0.5`), and an HTTP
    /// date (`Wed, 21 Oct 2015 07:28:00 GMT`, the wait being the time from `now` until then,
    /// zero if it has passed); either is capped at ``maximumSeconds``. Anything else (a sign, an
    /// exponent, `nan`, `inf`, garbage) is ignored, as if the server had sent no header.
    static func parse(_ header: String?, now: Date = Date()) -> Duration? {
        guard let value = header?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        guard let seconds = seconds(value) ?? httpDate(value).map({ $0.timeIntervalSince(now) }) else { return nil }
        // Capped before the conversion: `Duration.seconds(_:)` traps on a value it cannot hold.
        return .seconds(min(max(0, seconds), maximumSeconds))
    }

    /// `value` as a number of seconds: digits with at most one decimal point, nothing else (no
    /// sign, exponent, `nan` or `inf`, all of which `Double.init` would take).
    private static func seconds(_ value: String) -> Double? {
        let digits = value.filter(\.isASCIIDigit).count
        let others = value.count - digits
        guard digits > 0, others == 0 || (others == 1 && value.contains(".")) else { return nil }
        // Never NaN from digits alone; a very long number is infinite, and capped by the caller.
        return Double(value)
    }

    /// `value` as an HTTP date, in the preferred IMF-fixdate form, the obsolete RFC 850 form or
    /// asctime's (RFC 9110 §5.6.7 asks recipients to accept all three).
    private static func httpDate(_ value: String) -> Date? {
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            if let date = formatter.date(from: value) { return date }
        }
        return nil
    }
}

extension Character {
    /// `0` to `9`, and no other digit (`Character.isNumber` takes in many scripts' digits and
    /// fractions).
    fileprivate var isASCIIDigit: Bool {
        ("0"..."9").contains(self)
    }
}
