import Foundation
import NIOSSL
import PostgresNIO

/// How the store's connections use TLS, from a PostgreSQL URL's `sslmode` and `sslrootcert`, as
/// libpq reads them: `disable` (the default here), `prefer` (TLS when the server offers it,
/// unverified), `require` (TLS or nothing, unverified, unless `sslrootcert` is given: then the
/// chain is verified, as libpq does), `verify-ca` (the server's certificate signed by a
/// trusted CA) and `verify-full` (that, and the certificate names the URL's host). Trusted CAs
/// are the `sslrootcert` file's (PEM), or the system's.
struct PostgresTLS {
    /// The `sslmode` values.
    enum Mode: String, CaseIterable {
        case disable
        case prefer
        case require
        case verifyCA = "verify-ca"
        case verifyFull = "verify-full"
    }

    let mode: Mode
    /// The client's TLS configuration; `nil` for `disable`.
    let configuration: TLSConfiguration?

    /// The TLS the URL's query asks for.
    ///
    /// - Throws: a description of what is wrong: an unknown `sslmode`, or a `sslrootcert`
    ///   that is not a readable file.
    init(query: [URLQueryItem]) throws(PostgresStore.BadURL.Reason) {
        let modeText = query.last { $0.name == "sslmode" }?.value ?? Mode.disable.rawValue
        guard let mode = Mode(rawValue: modeText) else {
            throw .init("sslmode=\(modeText) is none of \(Mode.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        self.mode = mode
        let rootCertificate = query.last { $0.name == "sslrootcert" }?.value
        if let rootCertificate, !FileManager.default.isReadableFile(atPath: rootCertificate) {
            throw .init("sslrootcert=\(rootCertificate) is not a file this process can read")
        }
        guard mode != .disable else {
            configuration = nil
            return
        }
        var configuration = TLSConfiguration.makeClientConfiguration()
        switch mode {
        case .disable, .prefer:
            configuration.certificateVerification = .none
        case .require:
            configuration.certificateVerification = rootCertificate == nil ? .none : .noHostnameVerification
        case .verifyCA:
            configuration.certificateVerification = .noHostnameVerification
        case .verifyFull:
            configuration.certificateVerification = .fullVerification
        }
        if let rootCertificate {
            configuration.trustRoots = .file(rootCertificate)
        }
        self.configuration = configuration
    }

    /// The pool's TLS.
    var pooled: PostgresClient.Configuration.TLS {
        guard let configuration else { return .disable }
        return mode == .prefer ? .prefer(configuration) : .require(configuration)
    }

    /// A single connection's TLS (the feed's follower and listener, the writers).
    ///
    /// - Throws: NIOSSL's error when the configuration cannot make a context (an unreadable
    ///   or malformed CA file).
    func single() throws -> PostgresConnection.Configuration.TLS {
        guard let configuration else { return .disable }
        let context = try NIOSSLContext(configuration: configuration)
        return mode == .prefer ? .prefer(context) : .require(context)
    }
}
