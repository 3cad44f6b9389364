extension PostgresStore {
    /// `url` with its password, if any, replaced by `***`, as logs, banners and errors may show
    /// it: the user info's password (`postgres://app:***@db:5432/app`) and a `password=` query
    /// parameter. Read by hand, not by `URLComponents`, so that a URL that does not parse (a
    /// password holding `#` or `/`, say) is masked too: everything between `://` and the last
    /// `@` is the user info.
    public static func redacted(_ url: String) -> String {
        var shown = url
        if let scheme = shown.range(of: "://"), let at = shown.range(of: "@", options: .backwards), scheme.upperBound <= at.lowerBound,
            let colon = shown[scheme.upperBound..<at.lowerBound].firstIndex(of: ":")
        {
            shown.replaceSubrange(shown.index(after: colon)..<at.lowerBound, with: "***")
        }
        if let query = shown.firstIndex(of: "?") {
            let parameters = shown[shown.index(after: query)...].split(separator: "&", omittingEmptySubsequences: false).map { parameter in
                parameter.lowercased().hasPrefix("password=") ? "password=***" : String(parameter)
            }
            shown = String(shown[...query]) + parameters.joined(separator: "&")
        }
        return shown
    }

    /// Whether `url` holds a password (see ``redacted(_:)``): one that a command line must not
    /// carry, where every user of the machine can read it.
    public static func holdsPassword(_ url: String) -> Bool {
        redacted(url) != url
    }
}
