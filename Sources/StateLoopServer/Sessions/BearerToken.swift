import Hummingbird

extension Request {
    /// The token of the request's `Authorization: Bearer <token>` header (RFC 6750), for an
    /// ``AccessPolicy`` to look its session up by; `nil` when there is none to trust.
    ///
    /// The scheme is matched whatever its case (RFC 9110 §11.1: `bearer` and `BEARER` are
    /// `Bearer`), and spaces or tabs around the value and between the scheme and the token are
    /// ignored. `nil` for a request with no `Authorization` header, another scheme (`Basic …`),
    /// no token or one with whitespace or control characters inside (never a token of the
    /// scheme's syntax), and for a request with more than one `Authorization` header, which
    /// would leave it to chance whose credentials count.
    public var bearerToken: String? {
        let values = headers[values: .authorization]
        guard values.count == 1 else { return nil }
        let field = values[0].unicodeScalars
        func isBlank(_ scalar: Unicode.Scalar) -> Bool { scalar == " " || scalar == "\t" }
        guard let first = field.firstIndex(where: { !isBlank($0) }), let last = field.lastIndex(where: { !isBlank($0) }) else { return nil }
        let value = field[first...last]
        guard let gap = value.firstIndex(where: isBlank), Substring(value[..<gap]).lowercased() == "bearer" else { return nil }
        let token = value[gap...].drop(while: isBlank)
        guard token.allSatisfy({ !isBlank($0) && $0.properties.generalCategory != .control }) else { return nil }
        return String(Substring(token))
    }
}
