import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO

extension PostgresStore {
    /// Why the store could not open: the database or role does not exist, the password is
    /// wrong, nothing listens at the address, or the server did not answer within the
    /// deadline. Its description names what is missing and the command that creates it.
    ///
    /// Opening tries one connection first and throws this at once: without it, the pool of
    /// connections would retry a database that does not exist for ever, and a server starting
    /// on it would hang without a word.
    public struct OpenFailure: Error, CustomStringConvertible {
        /// What is wrong, and how to fix it.
        public let description: String
    }

    /// The parts of a PostgreSQL URL the messages name.
    struct Target {
        let host: String
        let port: Int
        let user: String
        let database: String

        var address: String { "\(host):\(port)" }
    }

    /// Connects once with `configuration` and closes the connection, within `deadline` (the
    /// store's, or ``openingDeadline`` if that is longer).
    ///
    /// - Throws: ``OpenFailure`` saying what is wrong.
    static func checkConnection(_ configuration: PostgresConnection.Configuration, to target: Target, deadline: Duration, logger: Logger)
        async throws
    {
        // The connection's own connect timeout is the store's deadline, shorter than the
        // opening's on a busy machine: this one connection gets the opening's.
        var patient = configuration
        patient.options.connectTimeout = .nanoseconds(Int64(deadline / .nanoseconds(1)))
        let configuration = patient
        do {
            try await Deadline.race(deadline) {
                // Closed here, inside the race: a connection opened after the deadline is
                // closed all the same rather than dropped open.
                let connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
                try? await connection.close()
            }
        } catch let error as PSQLError {
            throw failure(error, target: target)
        } catch is Unanswered {
            throw OpenFailure(
                description:
                    "PostgreSQL at \(target.address) did not answer within \(deadline): is the address right, and the server up and not overloaded?"
            )
        }
    }

    /// The failure `error` means, in words.
    static func failure(_ error: PSQLError, target: Target) -> OpenFailure {
        let (address, user, database) = (target.address, target.user, target.database)
        let connectionFlags = "-h \(target.host) -p \(target.port)"
        if error.code == .server {
            let message = error.serverInfo?[.message] ?? "\(error)"
            switch error.serverInfo?[.sqlState] {
            case "3D000":
                return OpenFailure(
                    description:
                        "the database \"\(database)\" does not exist at \(address). Create it, as a superuser: createdb \(connectionFlags) -U postgres -O \(user) \(database) (in psql: CREATE DATABASE \"\(database)\" OWNER \"\(user)\";)"
                )
            case "28000" where message.contains("role"):
                return OpenFailure(
                    description:
                        "the role \"\(user)\" does not exist at \(address). Create it, as a superuser: createuser \(connectionFlags) -U postgres \(user) (in psql: CREATE ROLE \"\(user)\" LOGIN;)"
                )
            case "28P01":
                return OpenFailure(
                    description:
                        "PostgreSQL at \(address) refused the password of \"\(user)\": give the right one in the URL (postgres://\(user):PASSWORD@…)"
                )
            default:
                return OpenFailure(description: "PostgreSQL at \(address) refused \"\(user)\" on \"\(database)\": \(message)")
            }
        }
        if error.code == .sslUnsupported {
            return OpenFailure(
                description:
                    "PostgreSQL at \(address) does not accept TLS: turn ssl on in its configuration, or connect with sslmode=disable or prefer"
            )
        }
        if error.code == .connectionError, let underlying = error.underlying,
            underlying is NIOSSLError || underlying is NIOSSLExtraError || underlying is BoringSSLError
        {
            return OpenFailure(
                description:
                    "the TLS handshake with PostgreSQL at \(address) failed: \(underlying). With sslmode=verify-ca or verify-full, sslrootcert must be the CA that signed the server's certificate (the system's CAs otherwise), and with verify-full the certificate must name the URL's host"
            )
        }
        if error.code == .connectionError, let underlying = error.underlying {
            if let io = underlying as? IOError, io.errnoCode == ECONNREFUSED {
                return Self.nothingListens(target)
            }
            if let connect = underlying as? NIOConnectionError,
                connect.connectionErrors.contains(where: { ($0.error as? IOError)?.errnoCode == ECONNREFUSED })
            {
                return Self.nothingListens(target)
            }
            return OpenFailure(description: "cannot connect to PostgreSQL at \(address): \(underlying)")
        }
        return OpenFailure(description: "cannot open PostgreSQL at \(address) as \"\(user)\" on \"\(database)\": \(String(reflecting: error))")
    }

    private static func nothingListens(_ target: Target) -> OpenFailure {
        OpenFailure(description: "nothing listens at \(target.address): is PostgreSQL running there, on that port?")
    }
}
