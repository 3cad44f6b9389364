import Foundation
import StateLoopServer
import StateLoopServerPostgres
import StateLoopWire
import TestSupport
import Testing

/// TLS to PostgreSQL as managed databases ask for it, against a throwaway server that accepts
/// TLS connections only, with a certificate of its own CA.
@Suite("PostgreSQL store: TLS", .timeLimit(.minutes(5)), .enabled(if: StoreKind.postgresTestsEnabled, "STATELOOP_POSTGRES_TESTS=0"))
struct PostgresTLSTests {
    @Test(
        "sslmode=require, verify-ca and verify-full with the server's CA open and commit; without TLS, with another CA, or against a server without TLS: refused, saying why"
    )
    func modes() async throws {
        guard postgresIsInstalled() else { return }
        let server = try await ThrowawayPostgres.start(tls: true)
        do {
            let database = try await server.createDatabase("tls")
            let ca = try #require(server.certificateAuthority)
            let other = try #require(server.otherCertificateAuthority)
            func url(_ host: String, _ query: String) -> String {
                "postgres://\(server.user)@\(host):\(server.port)/\(database)?\(query)"
            }
            for opening in [
                url("127.0.0.1", "sslmode=require"), url("127.0.0.1", "sslmode=verify-ca&sslrootcert=\(ca)"),
                url("localhost", "sslmode=verify-full&sslrootcert=\(ca)"), url("127.0.0.1", "sslmode=prefer"),
            ] {
                let store = try await openingPatiently { try await PostgresStore(url: opening, deadline: hangGuard) }
                let key = ResourceKey(resource: "board", id: "main")
                _ = try await store.write { try $0.write(Data("\"over TLS\"".utf8), to: key) }
                let (stored, _) = try await store.read(key, lastMutationIDOf: nil, scope: "")
                #expect(stored?.json == Data("\"over TLS\"".utf8), "\(opening)")
                store.close()
            }
            // The server takes TLS connections only: without TLS, its rules refuse the connection.
            await expectFailure(url("127.0.0.1", "sslmode=disable"), "no pg_hba.conf entry")
            await expectFailure(
                url("localhost", "sslmode=verify-full&sslrootcert=\(other)"), "the TLS handshake with PostgreSQL at localhost:\(server.port) failed")
            await expectFailure(url("127.0.0.1", "sslmode=verify-ca&sslrootcert=\(other)"), "the TLS handshake")
            // verify-full checks the name the URL gives, an address included: the certificate
            // names 127.0.0.1 and localhost, not 127.0.0.2 (verify-ca does not check names).
            let byAddress = try await openingPatiently {
                try await PostgresStore(url: url("127.0.0.1", "sslmode=verify-full&sslrootcert=\(ca)"), deadline: hangGuard)
            }
            byAddress.close()
            let unnamed = try await openingPatiently {
                try await PostgresStore(url: url("127.0.0.2", "sslmode=verify-ca&sslrootcert=\(ca)"), deadline: hangGuard)
            }
            unnamed.close()
            await expectFailure(url("127.0.0.2", "sslmode=verify-full&sslrootcert=\(ca)"), "the TLS handshake")
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()

        // A server without TLS, asked for it.
        let plain = try await ThrowawayPostgres.shared()
        await expectFailure("postgres://\(plain.user)@127.0.0.1:\(plain.port)/postgres?sslmode=require", "does not accept TLS")
    }

    @Test("an unknown sslmode or an unreadable sslrootcert is a bad URL, saying which, and its password is not shown")
    func badQuery() async throws {
        for (url, says) in [
            ("postgres://app:secret@127.0.0.1:1/db?sslmode=always", "sslmode=always is none of disable, prefer, require, verify-ca, verify-full"),
            ("postgres://app:secret@127.0.0.1:1/db?sslmode=verify-full&sslrootcert=/no/such/ca.pem", "sslrootcert=/no/such/ca.pem is not a file"),
        ] {
            do {
                let store = try await PostgresStore(url: url)
                store.close()
                Issue.record("\(url) opened")
            } catch let bad as PostgresStore.BadURL {
                #expect(bad.description.contains(says), "\(bad)")
                #expect(!bad.description.contains("secret"), "\(bad)")
            }
        }
    }

    @Test("a URL's password is masked wherever it is shown, a URL that does not parse included")
    func redaction() async {
        #expect(PostgresStore.redacted("postgres://app:s3cret@db:5432/x") == "postgres://app:***@db:5432/x")
        #expect(
            PostgresStore.redacted("postgres://app:p#ss/w@rd@db:5432/x?sslmode=require&password=z")
                == "postgres://app:***@db:5432/x?sslmode=require&password=***")
        #expect(PostgresStore.redacted("postgres://app@db:5432/x?sslmode=require") == "postgres://app@db:5432/x?sslmode=require")
        #expect(PostgresStore.holdsPassword("postgres://app:p#ss@db/x") && !PostgresStore.holdsPassword("postgres://app@db/x"))
        do {
            let store = try await PostgresStore(url: "postgres://app:p#ss/word@127.0.0.1:1/db")
            store.close()
            Issue.record("opened")
        } catch {
            #expect(!"\(error)".contains("p#ss") && !String(reflecting: error).contains("p#ss"), "\(error)")
        }
    }

    /// Opens `url` expecting a refusal that says `says`. The deadline is a hang guard: beside CPU
    /// hogs the store's own 10 s once ran out before the throwaway server answered.
    private func expectFailure(_ url: String, _ says: String, sourceLocation: SourceLocation = #_sourceLocation) async {
        do {
            let store = try await PostgresStore(url: url, deadline: hangGuard)
            store.close()
            Issue.record("\(url) opened", sourceLocation: sourceLocation)
        } catch let failure as PostgresStore.OpenFailure {
            #expect(failure.description.contains(says), "\(failure)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(url): \(String(reflecting: error))", sourceLocation: sourceLocation)
        }
    }
}
